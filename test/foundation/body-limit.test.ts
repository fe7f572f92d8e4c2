import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCARD_LIMIT_BYTES } from '../../src/http/body-limit.js';
import { createWorkspaceWithCli, freePort, startServe, stopProcess } from '../support/processes.js';

// Issue #51: a body over the limit is answered 413 only once the rest of it has been read and
// discarded (up to a bound), so a client that sends its whole body before it reads the answer,
// as Node's fetch does, gets the problem rather than EPIPE. Against a real `verdict serve` in a
// process of its own (in one process with the client the race does not show), with the
// response-batching writer on and off.

const MiB = 1024 * 1024;
const SIZES = [2 * MiB, 8 * MiB, 32 * MiB];
const TRIES = 3;

async function post(url: string, headers: Record<string, string>, size: number): Promise<{ status: number; type: unknown; detail: unknown }> {
  // A valid JSON document of `size` bytes, so only its size is wrong.
  const body = `{"name":"${'x'.repeat(size - 12)}"}`;
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const problem = (await response.json()) as { type: unknown; detail: unknown };
  return { status: response.status, type: problem.type, detail: problem.detail };
}

for (const batching of ['1', '0']) {
  describe(`a body over the limit, VERDICT_RESPONSE_BATCHING=${batching}`, () => {
    let dataDir: string;
    let server: ChildProcess;
    let base: string;
    let key: string;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'verdict-413-'));
      const port = await freePort();
      const env = { VERDICT_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', VERDICT_LOG_LEVEL: 'warn', VERDICT_RESPONSE_BATCHING: batching };
      server = await startServe(env);
      base = `http://127.0.0.1:${port}`;
      ({ key } = createWorkspaceWithCli(env, 'Limits'));
    }, 200_000);
    afterAll(async () => {
      await stopProcess(server);
      rmSync(dataDir, { recursive: true, force: true });
    });

    const targets = (): Array<[string, string, Record<string, string>]> => [
      ['an API route', `${base}/v1/environments`, { authorization: `Bearer ${key}` }],
      ['the admin UI’s sign-in', `${base}/ui/session`, { origin: base }],
    ];

    it("reaches Node's fetch as the 413 problem at 2, 8 and 32 MiB, on an API route and /ui/session, every time", async () => {
      for (const [name, url, headers] of targets()) {
        for (const size of SIZES) {
          for (let attempt = 1; attempt <= TRIES; attempt += 1) {
            const answer = await post(url, headers, size).catch((error: Error & { cause?: { code?: string } }) => ({
              failed: error.cause?.code ?? error.message,
            }));
            expect(answer, `${name}, ${size / MiB} MiB, try ${attempt}`).toEqual({
              status: 413,
              type: 'https://verdict.dev/problems/payload-too-large',
              detail: 'the request body exceeds the limit of 1048576 bytes',
            });
          }
        }
      }
    }, 300_000);
  });
}

describe('the bound on what is discarded', () => {
  it('is above the sizes tried, and stated in the docs', async () => {
    expect(DISCARD_LIMIT_BYTES).toBeGreaterThanOrEqual(32 * MiB);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8')).toContain(`${DISCARD_LIMIT_BYTES / MiB} MiB`);
  });
});
