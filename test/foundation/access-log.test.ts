import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

/** A real `verdict serve` at its default log level, its stdout collected. */
describe('the access log of a running server', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-access-log-'));
  let url = '';
  let key = '';
  let stdout = '';
  let child: ReturnType<typeof spawn>;

  beforeAll(async () => {
    const port = await freePort();
    const env: Record<string, string | undefined> = { ...process.env, VERDICT_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
    delete env.VERDICT_LOG_LEVEL;
    const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', 'Logs', '--json'], { env, encoding: 'utf8' });
    key = (JSON.parse(created.stdout) as { api_key: { key: string } }).api_key.key;
    child = spawn(process.execPath, ['bin/verdict.js', 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (
        await fetch(`${url}/v1/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the server did not start');
  });

  afterAll(() => {
    child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes exactly one line per request, all of them by the time a graceful stop ends', async () => {
    const requests = Array.from({ length: 300 }, (_, n) => {
      const id = `log-${n}`;
      const path = n % 3 === 0 ? '/v1/workspaces/current' : n % 3 === 1 ? `/v1/experiments/01ARZ3NDEKTSV4RRFFQ69G5FAV?api_key=sekrit${n}` : '/v1/nowhere';
      return fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': id } }).then(async (r) => ({
        id,
        status: r.status,
        body: await r.text(),
      }));
    });
    const answered = await Promise.all(requests);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const accessLines = lines.filter((line) => line.msg === 'request' && String(line.request_id).startsWith('log-'));
    expect(accessLines).toHaveLength(300);
    for (const { id, status } of answered) {
      const mine = accessLines.filter((line) => line.request_id === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ level: 30, method: 'GET', status });
      expect(mine[0]?.duration_ms).toEqual(expect.any(Number));
    }
    expect(accessLines.find((line) => line.request_id === 'log-1')).toMatchObject({
      route: '/v1/experiments/:id',
      status: 404,
      url: '/v1/experiments/01ARZ3NDEKTSV4RRFFQ69G5FAV?api_key=[redacted]',
    });
    expect(accessLines.find((line) => line.request_id === 'log-2')).toMatchObject({ route: null, status: 404 });
    expect(stdout).not.toContain('sekrit');
    expect(stdout).not.toContain(key);
    // Fastify's own per-request lines are gone: one line per request is the whole cost.
    expect(lines.filter((line) => line.msg === 'incoming request' || line.msg === 'request completed')).toEqual([]);
  });
});

describe('the asynchronous log destination', () => {
  it('loses no line when the process dies of an uncaught exception right after logging', () => {
    const count = 20_000;
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/log-then-crash.ts', String(count)], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('crash after the responses');
    const lines = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { line: number });
    expect(lines).toHaveLength(count);
    expect(lines.at(-1)?.line).toBe(count - 1);
  });
});
