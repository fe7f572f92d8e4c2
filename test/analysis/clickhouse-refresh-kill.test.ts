import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clickhouseUnavailable } from '../support/clickhouse.js';
import { createWorkspaceWithCli, freePort, startServe, stopProcess } from '../support/processes.js';
import type { TestServer } from '../support/server.js';
import { expectSameAnalysis } from './incremental-support.js';
import { createExperiment, createMetric, exposeExactly } from './support.js';

/**
 * docs/analysis.md "Incremental analysis in ClickHouse", Commit: a real `verdict serve` with its
 * events and rollups in the embedded engine (chdb:DIR) is killed with SIGKILL while it computes
 * an incremental snapshot that refreshes every unit (a metric edit) and new events, at several
 * points of that computation; after each restart the incremental snapshot equals the full one.
 */
const UNITS_PER_VARIANT = 300;
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse kill -9 refresh test is skipped.`);

/** The TestServer's HTTP client over a child process (the analysis helpers only send requests). */
function httpClient(url: string): TestServer {
  const request = async (method: string, path: string, options: { key?: string | null; body?: unknown } = {}) => {
    const headers: Record<string, string> = options.key ? { authorization: `Bearer ${options.key}` } : {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await response.text();
    const body = text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body, text };
  };
  return { url, request } as unknown as TestServer;
}

async function computeOver(server: TestServer, key: string, experimentId: string, mode: 'incremental' | 'full'): Promise<any> {
  const response = await server.request('POST', `/v1/experiments/${experimentId}/results/compute?mode=${mode}`, { key });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

/** The snapshot without what depends on the moment it was computed (this server runs on the real clock). */
function withoutClock(snapshot: any): any {
  const { days_elapsed: _elapsed, ...decision } = snapshot.decision;
  return { ...snapshot, decision };
}

/** Sends the events and waits until the drainer has moved them all into ClickHouse (the full computation reads them). */
async function sendAndDrain(server: TestServer, key: string, experimentId: string, events: object[], expectedRead: number): Promise<void> {
  for (let start = 0; start < events.length; start += 500) {
    const response = await server.request('POST', '/v1/events/batch', { key, body: { events: events.slice(start, start + 500) } });
    expect(response.status, response.text).toBe(202);
  }
  for (let attempt = 0; ; attempt += 1) {
    if ((await computeOver(server, key, experimentId, 'full')).computation.events_read === expectedRead) return;
    if (attempt > 100) throw new Error('the events were not drained in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

suite(`incremental refresh in ClickHouse under kill -9${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-ch-kill-'));
  let child: ChildProcess | null = null;
  afterAll(async () => {
    if (child) await stopProcess(child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves the rollups as the last committed refresh left them, wherever the refresh is killed', { timeout: 300_000 }, async () => {
    const setupStarted = performance.now();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      VERDICT_DATA_DIR: dir,
      VERDICT_DATABASE_URL: `sqlite:${join(dir, 'verdict.db')}`,
      VERDICT_CLICKHOUSE_URL: `chdb:${join(dir, 'clickhouse')}`,
      VERDICT_LOG_LEVEL: 'error',
      PORT: String(port),
    };
    const { key, environmentId } = createWorkspaceWithCli(env, 'ClickHouse kill -9');
    child = await startServe(env);
    const server = httpClient(url);
    const orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
    const revenue = await createMetric(server, key, { key: 'revenue', event_key: 'buy', kind: 'revenue', property_path: 'amount', aggregation: 'sum' });
    const experiment = await createExperiment(server, key, {
      environment_id: environmentId,
      key: 'kill-refresh',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: revenue,
      guardrail_metric_ids: [orders],
      variance_reduction: { method: 'cuped', lookback_days: 7 },
    });
    const exposed = await exposeExactly(server, key, experiment, { control: UNITS_PER_VARIANT, treatment: UNITS_PER_VARIANT }, 'k');
    const units = [...exposed.control!, ...exposed.treatment!];
    const buys = (round: number) =>
      units.map((unit_id, i) => ({ event_key: 'buy', unit_id, occurred_at: new Date().toISOString(), properties: { amount: ((i * 31 + round) % 97) / 7 } }));
    let read = 0;
    /** New events for every unit and a metric edit that rebuilds its rows for every unit. */
    const change = async (round: number) => {
      read += units.length;
      await sendAndDrain(server, key, experiment.id, buys(round), read);
      const edited = await server.request('PATCH', `/v1/metrics/${orders}`, { key, body: { unit_dedup_window: round % 2 === 0 ? 'P14D' : 'P7D' } });
      expect(edited.status, edited.text).toBe(200);
    };
    await change(0);
    await computeOver(server, key, experiment.id, 'incremental');
    // The computation killed below, measured once, then killed at fractions of its time.
    await change(1);
    const started = performance.now();
    await computeOver(server, key, experiment.id, 'incremental');
    const took = performance.now() - started;
    console.info(`[verdict] the refresh took ${Math.round(took)} ms; setup ${Math.round(started - setupStarted)} ms`);
    let interrupted = 0;
    for (const [round, fraction] of [0.2, 0.6].entries()) {
      await change(round + 2);
      const dying = computeOver(server, key, experiment.id, 'incremental').then(
        () => 'completed',
        () => 'killed',
      );
      await new Promise((resolve) => setTimeout(resolve, took * fraction));
      await stopProcess(child, 'SIGKILL');
      if ((await dying) === 'killed') interrupted += 1;
      child = await startServe(env);
      const incremental = await computeOver(server, key, experiment.id, 'incremental');
      const full = await computeOver(server, key, experiment.id, 'full');
      expectSameAnalysis(withoutClock(incremental), withoutClock(full), `after the kill at ${fraction} of a refresh`);
    }
    // A kill that came after the computation tests nothing: at least one must have landed inside it.
    expect(interrupted).toBeGreaterThanOrEqual(1);
  });
});
