import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { freePort } from '../support/net.js';
import { eventually, stopProcess } from '../support/processes.js';

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['bin/verdict.js', ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
}

describe('verdict --help', () => {
  it('explains every command', () => {
    const help = cli(['--help'], {});
    expect(help.status).toBe(0);
    for (const command of ['serve', 'worker', 'migrate', 'workspaces']) expect(help.stdout).toContain(command);
    const serve = cli(['serve', '--help'], {});
    expect(serve.stdout).toContain('--no-workers');
    const create = cli(['workspaces', 'create', '--help'], {});
    expect(create.stdout).toContain('--json');
  });

  it('fails clearly without a workspace name', () => {
    const result = cli(['workspaces', 'create'], {});
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/--name/);
  });
});

describe('serve at start', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'verdict-serve-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Starts `serve` with `args` and `env`, returns the first line it logs once listening, then stops it. */
  async function listeningLine(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
    const server = spawn(process.execPath, ['bin/verdict.js', 'serve', ...args], { env: { ...process.env, VERDICT_DATA_DIR: dataDir, ...env } });
    let stdout = '';
    server.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    try {
      const line = await eventually(async () => stdout.split('\n').find((entry) => entry.includes('Verdict is serving')), 60_000, 'the listening line');
      return JSON.parse(line) as Record<string, unknown>;
    } finally {
      await stopProcess(server);
    }
  }

  it('binds every interface by default and logs the address and port it bound', async () => {
    const line = await listeningLine([], { PORT: '0' });
    expect(line).toMatchObject({ address: '0.0.0.0', port: expect.any(Number) });
    expect(line.port).not.toBe(0);
    expect(line.msg).toBe(`Verdict is serving on http://0.0.0.0:${String(line.port)} (every interface) (API docs at /docs)`);
  });

  it('logs the loopback when told to bind it', async () => {
    const line = await listeningLine(['--port', '0'], { HOST: '127.0.0.1' });
    expect(line).toMatchObject({ address: '127.0.0.1' });
    expect(line.msg).toBe(`Verdict is serving on http://127.0.0.1:${String(line.port)} (API docs at /docs)`);
  });

  it('refuses to start on a numeric setting that is not a plain integer in range, naming it', () => {
    for (const [name, raw] of [
      ['VERDICT_EVENT_RETENTION_DAYS', '1e9'],
      ['VERDICT_EVENT_RETENTION_DAYS', '0x10'],
      ['VERDICT_JOB_CONCURRENCY', ' 7 '],
      ['PORT', '1e3'],
    ] as const) {
      const result = cli(['serve'], { VERDICT_DATA_DIR: dataDir, [name]: raw });
      expect(result.status, `${name}=${raw}`).toBe(1);
      expect(result.stderr).toContain(`verdict: configuration error: ${name} must be a whole number from`);
    }
    const port = cli(['serve', '--port', '0b11'], { VERDICT_DATA_DIR: dataDir });
    expect(port.status).toBe(1);
    expect(port.stderr).toContain('--port must be a whole number from 0 to 65535');
  });
});

describeEach("a new user's first steps", {}, ({ dialect }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  // Every test starts from a new user's empty database, whatever another test did to its own.
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    const url = database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`;
    env = { VERDICT_DATA_DIR: database.dataDir, VERDICT_DATABASE_URL: url, VERDICT_LOG_LEVEL: 'warn' };
  });
  afterEach(async () => database.drop());

  it('migrates, bootstraps with --json, and serves with that key', async () => {
    const migrate = cli(['migrate'], env);
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/applied|up to date/);

    const created = cli(['workspaces', 'create', '--name', 'Acme', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    const bootstrap = JSON.parse(created.stdout);
    expect(Object.keys(bootstrap).sort()).toEqual(['api_key', 'environment', 'webhook_secret', 'workspace']);
    expect(bootstrap.workspace).toMatchObject({ name: 'Acme', slug: 'acme' });
    expect(bootstrap.environment).toMatchObject({ slug: 'production', workspace_id: bootstrap.workspace.id });
    expect(bootstrap.api_key).toMatchObject({ kind: 'server', environment_id: null, key: expect.stringMatching(/^vd_srv_all_/) });
    expect(bootstrap.webhook_secret).toMatch(/^whsec_[0-9A-Za-z]{43,}$/);

    const port = await freePort();
    const server = spawn(process.execPath, ['bin/verdict.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    try {
      const deadline = Date.now() + 30_000;
      let response: Response | undefined;
      while (Date.now() < deadline) {
        try {
          response = await fetch(`http://127.0.0.1:${port}/v1/workspaces/current`, {
            headers: { authorization: `Bearer ${bootstrap.api_key.key}` },
          });
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(response?.status).toBe(200);
      expect(await response?.json()).toMatchObject({ id: bootstrap.workspace.id, name: 'Acme' });
      const docs = await fetch(`http://127.0.0.1:${port}/docs/`);
      expect(docs.status).toBe(200);
      const openapi: any = await (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)).json();
      expect(openapi.openapi).toBe('3.1.0');
      expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/v1/healthz', '/v1/audit', '/v1/api-keys/{id}']));
    } finally {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    expect(server.exitCode).toBe(0);
  });

  it('gives a second workspace its own slug', () => {
    // `workspaces create` migrates an empty database itself (the test above runs `migrate` first).
    const first = cli(['workspaces', 'create', '--name', 'Acme', '--json'], env);
    expect(first.status, first.stderr).toBe(0);
    const again = cli(['workspaces', 'create', '--name', 'Acme', '--json'], env);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).workspace.slug).toMatch(/^acme-[a-z0-9]+$/);
  });
});
