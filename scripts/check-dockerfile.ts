/**
 * Runs the Dockerfile's steps without Docker (`npm run docker:check`), for machines with no
 * container engine: reads the Dockerfile, copies what its build stage copies (minus
 * .dockerignore) into a temporary directory, runs its `RUN npm …` steps there (the apt-get step is
 * the host's business: the toolchain must be installed), assembles the runtime stage from its
 * `COPY --from=build` lines, then starts the image's CMD with its ENV as an unprivileged user
 * (nobody, when run as root) and runs its HEALTHCHECK command until it passes. It exits non-zero,
 * naming the step, when one fails. With an engine, `docker build .` is the real check.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Stage {
  lines: string[];
}

function stages(dockerfile: string): Stage[] {
  const joined = dockerfile.replace(/\\\n\s*/g, ' ');
  const result: Stage[] = [];
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (/^FROM\s/i.test(line)) result.push({ lines: [] });
    else result.at(-1)?.lines.push(line);
  }
  return result;
}

function fail(step: string, detail: string): never {
  console.error(`check-dockerfile: ${step} failed\n${detail}`);
  process.exit(1);
}

function run(step: string, command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): void {
  console.log(`==> ${step}`);
  const result = spawnSync(command, args, { ...options, stdio: 'inherit' });
  if (result.status !== 0) fail(step, `${command} ${args.join(' ')} exited with ${result.status}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function buildStage(stage: Stage, buildDir: string): void {
  const ignore = fs
    .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
  for (const line of stage.lines) {
    const copy = /^COPY\s+(?!--from)(.+)\s+(\S+)$/i.exec(line);
    if (copy) {
      const [sources, dest] = [copy[1]!.trim().split(/\s+/), copy[2]!];
      for (const source of sources) {
        const target = dest.endsWith('/') ? path.join(buildDir, dest, path.basename(source)) : path.join(buildDir, dest);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        run(
          `COPY ${source}`,
          'rsync',
          [
            '-a',
            ...ignore.map((pattern) => `--exclude=${pattern}`),
            path.join(ROOT, source) + (fs.statSync(path.join(ROOT, source)).isDirectory() ? '/' : ''),
            target,
          ],
          { cwd: ROOT },
        );
      }
      continue;
    }
    const npm = /^RUN\s+(npm\s.+)$/i.exec(line);
    if (npm) run(`RUN ${npm[1]}`, 'bash', ['-c', npm[1]!], { cwd: buildDir, env: { ...process.env, npm_config_prefer_offline: 'true' } });
    else if (/^RUN\s/i.test(line)) console.log(`==> skipped (the host provides it): ${line}`);
  }
}

function runtimeStage(stage: Stage, buildDir: string, runDir: string): { env: Record<string, string>; cmd: string[]; health: string[]; dataDir: string } {
  const env: Record<string, string> = {};
  let cmd: string[] = [];
  let health: string[] = [];
  for (const line of stage.lines) {
    const copy = /^COPY\s+--from=build\s+\/app\/(\S+)\s+(\S+)$/i.exec(line);
    if (copy) {
      // Like Docker, create the destination's parent directories.
      fs.mkdirSync(path.dirname(path.join(runDir, copy[2]!)), { recursive: true });
      run(`COPY --from=build ${copy[1]}`, 'cp', ['-a', path.join(buildDir, copy[1]!), path.join(runDir, copy[2]!)], { cwd: runDir });
    }
    const envLine = /^ENV\s+(.+)$/i.exec(line);
    if (envLine) for (const pair of envLine[1]!.split(/\s+/)) env[pair.split('=')[0]!] = pair.split('=').slice(1).join('=');
    const cmdLine = /^CMD\s+(\[.+\])$/i.exec(line);
    if (cmdLine) cmd = JSON.parse(cmdLine[1]!) as string[];
    const healthLine = /^HEALTHCHECK\s.*?CMD\s+(\[.+\])$/i.exec(line);
    if (healthLine) health = JSON.parse(healthLine[1]!) as string[];
  }
  if (cmd.length === 0 || health.length === 0) fail('reading the runtime stage', 'it needs a CMD and a HEALTHCHECK CMD, both in JSON form');
  if (!stage.lines.some((line) => /^USER\s+(?!root)\S+/i.test(line))) fail('reading the runtime stage', 'it must switch to a non-root USER');
  return { env, cmd, health, dataDir: env.VERDICT_DATA_DIR ?? '/var/lib/verdict' };
}

async function healthy(health: string[], env: NodeJS.ProcessEnv, cwd: string, server: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) return false;
    if (spawnSync(health[0]!, health.slice(1), { env, cwd }).status === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return false;
}

async function main(): Promise<void> {
  const [build, runtime] = stages(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
  if (!build || !runtime) fail('reading the Dockerfile', 'expected two stages (build, runtime)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-image-'));
  const [buildDir, runDir, dataDir] = [path.join(work, 'build'), path.join(work, 'app'), path.join(work, 'data')];
  fs.mkdirSync(buildDir);
  fs.mkdirSync(runDir);
  fs.mkdirSync(dataDir);
  try {
    buildStage(build, buildDir);
    const image = runtimeStage(runtime, buildDir, runDir);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) spawnSync('chown', ['-R', 'nobody:nogroup', dataDir]);
    fs.chmodSync(work, 0o755);
    const port = await freePort();
    const env = { PATH: process.env.PATH, HOME: dataDir, ...image.env, VERDICT_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
    const [command, ...args] = asRoot ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...image.cmd] : image.cmd;
    console.log(`==> CMD ${image.cmd.join(' ')} (as ${asRoot ? 'nobody' : 'this user'}, port ${port})`);
    const server = spawn(command!, args, { cwd: runDir, env, stdio: 'inherit' });
    const ok = await healthy(image.health, env, runDir, server);
    server.kill('SIGTERM');
    await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve(null)));
    if (!ok) fail('HEALTHCHECK', 'the health check did not pass within 120 s');
    if (!fs.existsSync(path.join(runDir, 'web', 'dist', 'index.html'))) fail('the admin UI', 'web/dist/index.html is missing from the runtime stage');
    if (fs.existsSync(path.join(runDir, 'node_modules', 'typescript'))) fail('npm prune', 'development packages remain in the runtime stage');
    console.log(`==> the image's steps work: built, started as an unprivileged user, healthy, stopped with SIGTERM (exit ${server.exitCode})`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

await main();
