import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { freePort } from '../support/net.js';

// The command line reads the same configuration as the server (docs/deployment.md
// "Stopping processes", last paragraph): a bootstrap run
// with another VERDICT_DATA_DIR than `serve` used to create ./data/verdict.sqlite silently and
// print a key the server answered 401 to.

/** The CLI with exactly this database configuration, whatever the test run's environment holds. */
function cli(args: string[], env: Record<string, string>) {
  const base = { ...process.env, VERDICT_LOG_LEVEL: 'warn', VERDICT_DATABASE_URL: '' };
  return spawnSync(process.execPath, ['bin/verdict.js', ...args], { env: { ...base, ...env }, encoding: 'utf8', timeout: 60_000 });
}

const scratch: string[] = [];
function emptyDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-cli-'));
  scratch.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

const servers: ChildProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
});

/** Starts `verdict serve` with this environment and waits until it answers. */
async function serve(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const server = spawn(process.execPath, ['bin/verdict.js', 'serve', '--port', String(port), '--host', '127.0.0.1', '--no-workers'], {
    env: { ...process.env, VERDICT_LOG_LEVEL: 'warn', VERDICT_DATABASE_URL: '', ...env },
    stdio: 'ignore',
  });
  servers.push(server);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      await fetch(`${base}/v1/healthz`);
      return base;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('verdict serve did not answer within 30 s');
}

async function statusWithKey(base: string, key: string): Promise<number> {
  const response = await fetch(`${base}/v1/workspaces/current`, { headers: { authorization: `Bearer ${key}` } });
  return response.status;
}

describe('the bootstrap and a new SQLite database', () => {
  it('warns on stderr, naming the file, when it creates the database; the key works on a server with the same data dir', async () => {
    const dataDir = emptyDataDir();
    const file = path.join(dataDir, 'verdict.sqlite');
    const created = cli(['workspaces', 'create', '--name', 'Acme', '--json'], { VERDICT_DATA_DIR: dataDir });
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain('warning: created a new database file');
    expect(created.stderr).toContain(file);
    expect(created.stderr).toContain(`VERDICT_DATA_DIR=${dataDir}`);
    const key = JSON.parse(created.stdout).api_key.key as string;

    const again = cli(['workspaces', 'create', '--name', 'Beta', '--json'], { VERDICT_DATA_DIR: dataDir });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toBe('');

    const server = await serve({ VERDICT_DATA_DIR: dataDir });
    expect(await statusWithKey(server, key)).toBe(200);
  });

  it('a key printed into another data dir than the server uses is unknown to it, and the bootstrap said so', async () => {
    const serverDir = emptyDataDir();
    const otherDir = emptyDataDir();
    expect(cli(['migrate'], { VERDICT_DATA_DIR: serverDir }).status).toBe(0);
    const stray = cli(['workspaces', 'create', '--name', 'Stray', '--json'], { VERDICT_DATA_DIR: otherDir });
    expect(stray.status, stray.stderr).toBe(0);
    expect(stray.stderr).toContain(path.join(otherDir, 'verdict.sqlite'));
    const server = await serve({ VERDICT_DATA_DIR: serverDir });
    expect(await statusWithKey(server, JSON.parse(stray.stdout).api_key.key)).toBe(401);
  });

  it('names a database given as VERDICT_DATABASE_URL=sqlite:…', () => {
    const file = path.join(emptyDataDir(), 'nested', 'custom.sqlite');
    const created = cli(['workspaces', 'create', '--name', 'Acme', '--json'], { VERDICT_DATA_DIR: emptyDataDir(), VERDICT_DATABASE_URL: `sqlite:${file}` });
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain(`at ${file} (from VERDICT_DATABASE_URL)`);
  });

  it('migrate warns when it creates the database, and not once it exists', () => {
    const dataDir = emptyDataDir();
    const first = cli(['migrate'], { VERDICT_DATA_DIR: dataDir });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^applied: 0001_foundation/);
    expect(first.stderr).toContain(path.join(dataDir, 'verdict.sqlite'));
    const second = cli(['migrate'], { VERDICT_DATA_DIR: dataDir });
    expect(second.stdout).toBe('the database is up to date\n');
    expect(second.stderr).toBe('');
  });

  it('analyze refuses a data dir without a database and does not create one', () => {
    const dataDir = emptyDataDir();
    const result = cli(['analyze', '01J0000000000000000000000A'], { VERDICT_DATA_DIR: dataDir });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`no database at ${path.join(dataDir, 'verdict.sqlite')}`);
    expect(fs.existsSync(path.join(dataDir, 'verdict.sqlite'))).toBe(false);
  });
});

describeEach('the bootstrap and a PostgreSQL database', { dialects: ['postgres'] }, () => {
  // vitest collects a skipped suite's body too: without the variable the URL must still parse.
  const base = process.env.VERDICT_TEST_DATABASE_URL ?? 'postgres://unset.invalid/';
  const name = `verdict_cli_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString();
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('warns when the database was empty, naming it without credentials, and not the second time', async () => {
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const env = { VERDICT_DATA_DIR: emptyDataDir(), VERDICT_DATABASE_URL: url };
    const created = cli(['workspaces', 'create', '--name', 'Acme', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain('warning: created the Verdict tables in an empty database');
    expect(created.stderr).toContain(`/${name}`);
    const password = new URL(base).password;
    if (password) expect(created.stderr).not.toContain(password);

    const again = cli(['workspaces', 'create', '--name', 'Beta', '--json'], env);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    const server = await serve(env);
    expect(await statusWithKey(server, JSON.parse(created.stdout).api_key.key)).toBe(200);
  });
});
