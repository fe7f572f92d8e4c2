import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { runningExperiment } from '../experiments/helpers.js';
import { drained, startIngestServer, type IngestSetup } from '../events/support.js';
import type { FetchLike } from '../../sdk/src/index.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const SDK_DIST = path.join(ROOT, 'sdk', 'dist');

/** A Verdict on SQLite with the embedded buffer and its drainer, as `verdict serve` runs it. */
export function startSdkServer(): Promise<IngestSetup> {
  return startIngestServer('sqlite', 'embedded');
}

export async function startExperiment(setup: IngestSetup, key: string, overrides: Record<string, unknown> = {}): Promise<void> {
  const environments = await setup.server.request('GET', '/v1/environments', { key: setup.serverKey });
  const environmentId = environments.body.data[0].id as string;
  await runningExperiment(setup.server, setup.serverKey, environmentId, { key, ...overrides });
}

/** A fetch that counts the requests it makes, by path. */
export function countingFetch(): { fetch: FetchLike; count(path?: string): number } {
  const paths: string[] = [];
  return {
    fetch: (input, init) => {
      paths.push(new URL(input).pathname);
      return fetch(input, init);
    },
    count: (wanted?: string) => paths.filter((seen) => wanted === undefined || seen === wanted).length,
  };
}

/** client_event_ids stored for the workspace, once the buffer has drained. */
export async function storedEventIds(setup: IngestSetup): Promise<string[]> {
  await drained(setup.server, 30_000);
  const rows = await setup.server.ctx.db.selectFrom('events').select('client_event_id').where('workspace_id', '=', setup.workspaceId).execute();
  return rows.map((row) => row.client_event_id ?? '');
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Rebuilds sdk/dist when it is missing or older than sdk/src (`npm install` builds it first). */
export function ensureSdkBuild(): void {
  const entry = path.join(SDK_DIST, 'index.js');
  const stale = !fs.existsSync(entry) || fs.statSync(entry).mtimeMs < newestMtime(path.join(ROOT, 'sdk', 'src'));
  if (stale)
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'sdk', 'tsconfig.json')], {
      stdio: 'inherit',
    });
}
