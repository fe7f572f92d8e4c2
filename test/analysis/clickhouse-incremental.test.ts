import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistToClickHouse } from '../../src/clickhouse/events.js';
import { migrateClickHouse } from '../../src/clickhouse/schema.js';
import { computeById } from '../../src/features/analysis/service.js';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  drainedPurchase,
  expectConcurrentRefreshesCountOnce,
  refreshDyingBeforeCommit,
  smallExperiment,
  type SmallExperiment,
} from './conformance/small-experiment.js';
import { computeIn, expectSameAnalysis } from './incremental-support.js';
import { HOUR, ManualClock, sendEvents } from './support.js';

/**
 * The incremental analysis in ClickHouse (docs/analysis.md "Incremental analysis in ClickHouse"),
 * through the embedded engine: snapshots from the rollups equal the full computation and are
 * bit-identical when computed again; `mode=full` leaves the rollups alone; a refresh interrupted
 * before its commit leaves nothing read, also when it died before migration 0008; an event drained again (a retried drain, another drain
 * number) counts once; refreshes at once count every unit once; `--rebuild` builds every unit.
 * The random-stream differential test is test/analysis/incremental.test.ts's "[clickhouse]" variant.
 */
const T0 = Date.UTC(2033, 6, 1, 12);
const clock = new ManualClock(T0);
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse incremental tests are skipped.`);

const setUp = (server: TestServer, name: string) => smallExperiment(server, clock, T0, name);
const drained = (setup: SmallExperiment, unit: string, amount: number) => drainedPurchase(setup, clock, unit, amount);

/** The snapshot's analysis without how it was computed. */
function analysisOf(snapshot: any): string {
  const { id: _id, computed_at: _at, computation: _computation, ...rest } = snapshot;
  return JSON.stringify(rest);
}

async function committedRefreshes(server: TestServer, experimentId: string): Promise<number> {
  const result = await server.ctx.clickhouse!.client.query({
    query: 'SELECT count() AS n FROM rollup_state WHERE experiment_id = {id:String}',
    query_params: { id: experimentId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string }>();
  return Number(row?.n);
}

suite(`incremental analysis in ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { clock, config: { clickhouse: TEST_CLICKHOUSE } });
  });
  afterAll(async () => server?.close());

  it('computes from the rollups: equal to the full computation, bit-identical ten times, and mode=full leaves the rollups alone', async () => {
    const setup = await setUp(server, 'ch-inc-determinism');
    const first = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    expect(first.computation).toMatchObject({ store: 'clickhouse', events_read: 3 * 20, units_refreshed: 20 });
    const refreshes = await committedRefreshes(server, setup.experiment.id);
    const full = await computeIn(server, setup.key, setup.experiment.id, 'full');
    expect(await committedRefreshes(server, setup.experiment.id)).toBe(refreshes);
    expectSameAnalysis(first, full, 'first refresh');
    const analyses = new Set<string>();
    for (let run = 0; run < 10; run += 1) {
      const again = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
      expect(again.computation).toMatchObject({ events_read: 0, units_refreshed: 0 });
      analyses.add(analysisOf(again));
    }
    expect(analyses.size).toBe(1);
    expect([...analyses][0]).toBe(analysisOf(first));
  });

  it('leaves nothing of a refresh interrupted before its commit; the next one equals the full computation', async () => {
    const setup = await setUp(server, 'ch-inc-interrupted');
    await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    clock.advance(HOUR);
    await sendEvents(server, setup.key, [{ event_key: 'buy', unit_id: setup.units[3]!, occurred_at: clock.now(), properties: { amount: 2.5 } }]);
    // A re-bucketed and re-assigned unit: its rows are rebuilt by the interrupted refresh, then by the next one.
    const moved = setup.units[0]!;
    expect((await server.request('DELETE', `/v1/assignments/${setup.experiment.key}/${moved}`, { key: setup.key })).status).toBe(204);
    const body = { experiment_key: setup.experiment.key, unit_id: moved, context: { country: 'fr' } };
    expect((await server.request('POST', '/v1/assign', { key: setup.key, body })).status).toBe(200);
    const before = await computeIn(server, setup.key, setup.experiment.id, 'full');
    const refreshes = await committedRefreshes(server, setup.experiment.id);
    await refreshDyingBeforeCommit(server, setup.experiment.id);
    expect(await committedRefreshes(server, setup.experiment.id)).toBe(refreshes);
    // A merge keeps only each key's newest row: the interrupted refresh's, over the committed one.
    for (const table of ['rollup_units', 'rollup_values']) await server.ctx.clickhouse!.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    await sendEvents(server, setup.key, [{ event_key: 'buy', unit_id: setup.units[5]!, occurred_at: clock.now(), properties: { amount: 1.25 } }]);
    const next = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    const full = await computeIn(server, setup.key, setup.experiment.id, 'full');
    expect(full.computation.events_read).toBe(before.computation.events_read + 1);
    expectSameAnalysis(next, full, 'after the interrupted refresh');
  });

  it('finds the rows of a refresh that died before ClickHouse migration 0008 once the migration has run', async () => {
    const setup = await setUp(server, 'ch-inc-before-0008');
    await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    clock.advance(HOUR);
    await sendEvents(server, setup.key, [{ event_key: 'buy', unit_id: setup.units[4]!, occurred_at: clock.now(), properties: { amount: 3.5 } }]);
    await refreshDyingBeforeCommit(server, setup.experiment.id);
    // As on a deployment that migrated up to 0007: no refresh recorded as begun.
    const ch = server.ctx.clickhouse!;
    await ch.client.command({ query: 'TRUNCATE TABLE rollup_begun' });
    await ch.client.command({ query: "DELETE FROM verdict_clickhouse_migrations WHERE name = '0008_refreshes_begun'" });
    expect(await migrateClickHouse(ch)).toEqual(['0008_refreshes_begun']);
    // The died refresh's rows merged over the committed ones: read as committed, they would drop its units.
    for (const table of ['rollup_units', 'rollup_values']) await ch.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    const next = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    expectSameAnalysis(next, await computeIn(server, setup.key, setup.experiment.id, 'full'), 'after the migration');
  });

  it('counts once an event drained again by a retried drain, whether a refresh ran between the copies or not', async () => {
    const setup = await setUp(server, 'ch-inc-retried');
    await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    const persist = persistToClickHouse(server.ctx.clickhouse!);
    const once = drained(setup, setup.units[2]!, 4.75);
    const twice = drained(setup, setup.units[7]!, 3.5);
    await persist(server.ctx.db, [once, twice]);
    const between = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    expect(between.computation.events_read).toBe(2);
    // The same events delivered again (Redis: a drainer died between the commit and the acknowledgement), in batches cut differently.
    await persist(server.ctx.db, [twice, drained(setup, setup.units[8]!, 1)], { redelivered: true });
    await persist(server.ctx.db, [once], { redelivered: true });
    const after = await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    expect(after.computation.events_read).toBe(1);
    expectSameAnalysis(after, await computeIn(server, setup.key, setup.experiment.id, 'full'), 'after the retried drains');
  });

  it('lists the same changed units when it compares every unit instead of a set of the newly mirrored ones', async () => {
    const setup = await setUp(server, 'ch-inc-compare-all');
    await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    clock.advance(HOUR);
    // A unit re-bucketed and re-assigned, and events of another: past the set's bound the refresh compares every unit.
    const moved = setup.units[1]!;
    expect((await server.request('DELETE', `/v1/assignments/${setup.experiment.key}/${moved}`, { key: setup.key })).status).toBe(204);
    const body = { experiment_key: setup.experiment.key, unit_id: moved, context: { country: 'fr' } };
    expect((await server.request('POST', '/v1/assign', { key: setup.key, body })).status).toBe(200);
    await sendEvents(server, setup.key, [{ event_key: 'buy', unit_id: setup.units[6]!, occurred_at: clock.now(), properties: { amount: 4.5 } }]);
    const compared = await computeById(server.ctx, setup.experiment.id, { trigger: 'api', mode: 'incremental', refresh: { comparedBySetAtMost: 0 } });
    expect(compared?.computation).toMatchObject({ units_refreshed: 2 });
    expectSameAnalysis(compared, await computeIn(server, setup.key, setup.experiment.id, 'full'), 'comparing every unit');
  });

  it('counts every unit once when refreshes of one experiment run at once', async () => {
    await expectConcurrentRefreshesCountOnce(server, clock, await setUp(server, 'ch-inc-concurrent'));
  });

  it('--rebuild builds every unit again from raw events', async () => {
    const setup = await setUp(server, 'ch-inc-rebuild');
    await computeIn(server, setup.key, setup.experiment.id, 'incremental');
    const rebuilt = await computeById(server.ctx, setup.experiment.id, { trigger: 'cli', mode: 'incremental', rebuild: true });
    expect(rebuilt?.computation).toMatchObject({ mode: 'incremental', events_read: 3 * 20, units_refreshed: 20 });
    expectSameAnalysis(rebuilt, await computeIn(server, setup.key, setup.experiment.id, 'full'), 'after --rebuild');
  });
});
