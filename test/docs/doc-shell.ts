import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopProcess, waitHealthy } from '../support/processes.js';

export interface BlockRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The HTTP status of every curl call, in order (from the curl shim). */
  httpStatuses: number[];
}

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/** What a clone of this checkout needs to run `npm start` and `npm run verdict`: linked, not copied. */
const CLONE_ENTRIES = ['package.json', 'bin', 'src', 'node_modules', 'web'];

/** The environment a reader's terminal inherits: this run's, without its VERDICT_ variables. */
function readerEnvironment(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([name, value]) => value !== undefined && !/^VERDICT_/.test(name))) as Record<string, string>;
}

/**
 * The server the pages run against, as a reader starts it with `npm start`: in a directory that
 * looks like a clone, with its data in ./data, on a free port. One server for all the pages:
 * each page bootstraps a workspace of its own with the CLI and only works in it (every API call
 * and the audit log are scoped to the caller's workspace), so what one page does is not visible
 * to another, and each server start costs seconds of CPU on the machine the whole suite shares.
 */
export class DocServer {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-docs-server-'));
  readonly dataDir = path.join(this.dir, 'data');
  url = '';
  private child: ChildProcess | null = null;

  async start(): Promise<void> {
    for (const entry of CLONE_ENTRIES) fs.symlinkSync(path.join(repoRoot, entry), path.join(this.dir, entry));
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    // Not spawnVerdict: the server gets the reader's environment only, without this run's VERDICT_ variables.
    this.child = spawn(process.execPath, ['bin/verdict.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: this.dir,
      env: { ...readerEnvironment(), VERDICT_DATA_DIR: this.dataDir, VERDICT_LOG_LEVEL: 'warn', VERDICT_ANALYSIS_THREADS: '0', VERDICT_JOB_POLL_MS: '200' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    // Generous: the CI machine may be busy with the rest of the suite.
    await waitHealthy(this.url, this.child, { timeoutMs: 150_000 });
  }

  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A reader's terminal for one docs page: a fresh working directory that looks like a clone
 * (package.json, bin, src, node_modules and web link to this checkout, so `npm start` and
 * `npm run verdict` work there, while the files the page writes stay private) whose ./data is the
 * server's (the pages' `export VERDICT_DATA_DIR=./data  # the server's`), and a bash whose
 * variables and directory carry over from one block to the next. `VERDICT_URL` points the page at
 * the server; pages default it to http://localhost:8080.
 */
export class DocShell {
  readonly workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-docs-'));
  private readonly stateFile = path.join(this.workDir, '.docs-test-state.sh');
  private readonly shimDir = path.join(this.workDir, '.docs-test-bin');
  env: Record<string, string> = {};

  constructor(private readonly server: DocServer) {}

  start(): void {
    for (const entry of CLONE_ENTRIES) fs.symlinkSync(path.join(repoRoot, entry), path.join(this.workDir, entry));
    fs.symlinkSync(this.server.dataDir, path.join(this.workDir, 'data'));
    this.writeCurlShim();
    this.env = {
      ...readerEnvironment(),
      PATH: `${this.shimDir}:${process.env.PATH}`,
      VERDICT_URL: this.server.url,
      VERDICT_DATA_DIR: path.join(this.workDir, 'data'),
      VERDICT_LOG_LEVEL: 'warn',
    };
    const names = spawnSync('bash', ['-c', 'compgen -v'], { env: this.env, encoding: 'utf8' }).stdout;
    fs.writeFileSync(path.join(this.workDir, '.docs-test-baseline'), names);
  }

  /** Every curl the blocks run reports its HTTP status on stderr, which the test reads. */
  private writeCurlShim(): void {
    const realCurl = execFileSync('bash', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
    fs.mkdirSync(this.shimDir);
    const shim = path.join(this.shimDir, 'curl');
    fs.writeFileSync(shim, `#!/bin/sh\nexec ${realCurl} -w '%{stderr}docs-test-http-status %{http_code}\\n' "$@"\n`);
    fs.chmodSync(shim, 0o755);
  }

  /** Runs one block as the reader would paste it (with `set -eo pipefail`), then saves its state. */
  async run(code: string): Promise<BlockRun> {
    const script = [
      'set -eo pipefail',
      // A block that leaves a process in the background (it should be marked skip) does not outlive it.
      "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
      `cd ${JSON.stringify(this.workDir)}`,
      `[ -f .docs-test-state.sh ] && source .docs-test-state.sh`,
      code,
      '',
      // Save the variables the page set (not bash's own) and the directory, for the next block.
      `{ for __v in $(compgen -v | grep -vxF -f ${JSON.stringify(path.join(this.workDir, '.docs-test-baseline'))} | grep -vE '^(BASH.*|PIPESTATUS|FUNCNAME|_|__v|OLDPWD|PWD|COLUMNS|LINES|OPTIND|OPTARG|SECONDS|RANDOM|SRANDOM|LINENO|EPOCH.*|HISTCMD|COMP_.*|DIRSTACK|GROUPS)$'); do declare -p "$__v" 2>/dev/null || true; done; printf 'cd %q\\n' "$PWD"; } > ${JSON.stringify(this.stateFile)}`,
    ].join('\n');
    const child = spawn('bash', ['-c', script], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const exitCode = await new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
    clearTimeout(timer);
    const statusLine = /^docs-test-http-status (\d+)$/;
    const stderrLines = stderr.split('\n');
    return {
      exitCode,
      stdout,
      stderr: stderrLines.filter((line) => !statusLine.test(line)).join('\n'),
      httpStatuses: stderrLines.flatMap((line) => {
        const match = statusLine.exec(line);
        return match ? [Number(match[1])] : [];
      }),
    };
  }

  stop(): void {
    fs.rmSync(this.workDir, { recursive: true, force: true });
  }
}
