import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clickhouseUnavailable } from '../support/clickhouse.js';
import { createWorkspaceWithCli, freePort, startServe, stopProcess } from '../support/processes.js';

/**
 * The README's bootstrap with the server's environment while `verdict serve` holds the embedded
 * ClickHouse engine (VERDICT_CLICKHOUSE_URL=chdb:PATH, whose directory one process at a time can
 * open): `workspaces create` never opens the engine and works; `analyze`, which reads events,
 * says that the server owns it; `migrate` migrates the database and says the same of ClickHouse.
 */
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the CLI-beside-serve ClickHouse test is skipped.`);

function verdict(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['bin/verdict.js', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
}

suite(`the CLI beside a server holding the embedded ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  it('bootstraps a workspace while serve runs, and the commands that need ClickHouse say the server owns it', { timeout: 300_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-cli-chdb-'));
    const env: Record<string, string> = {
      VERDICT_DATA_DIR: dataDir,
      VERDICT_CLICKHOUSE_URL: `chdb:${path.join(dataDir, 'clickhouse')}`,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      VERDICT_LOG_LEVEL: 'error',
    };
    const server = await startServe(env);
    try {
      const { key, workspaceId } = createWorkspaceWithCli(env, 'Beside serve');
      const current = await fetch(`http://127.0.0.1:${env.PORT}/v1/workspaces/current`, { headers: { authorization: `Bearer ${key}` } });
      expect(current.status).toBe(200);
      expect(((await current.json()) as { id: string }).id).toBe(workspaceId);

      const analyzed = verdict(['analyze', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], env);
      expect(analyzed.status).toBe(1);
      expect(analyzed.stderr).toMatch(/embedded ClickHouse engine at .* is held by another process: a running `verdict serve` owns it/);

      const migrated = verdict(['migrate'], env);
      expect(migrated.status, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain('the database is up to date');
      expect(migrated.stderr).toContain('ClickHouse not migrated here');
      // The server goes on answering with the engine it holds.
      expect((await fetch(`http://127.0.0.1:${env.PORT}/v1/workspaces/current`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await stopProcess(server);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
