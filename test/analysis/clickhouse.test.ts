import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, createExperiment, createMetric, DAY, drainEvents, exposeExactly, HOUR, ManualClock, sendEvents, type OutgoingEvent } from './support.js';
import { exactSum, metricAggregates, unitJoinKey } from '../../src/features/analysis/clickhouse/sql.js';
import { Params } from '../../src/features/analysis/clickhouse/sql-parts.js';
import { comparable, expectSameNumbers } from './snapshot-compare.js';

/**
 * docs/analysis.md "ClickHouse": the same scenario (every kind of metric, caps, a ratio, CUPED,
 * late events, a dimension, a re-bucketed unit) sent through HTTP to a server on SQLite alone and
 * to one whose events and analysis are in ClickHouse (the embedded engine). The snapshots must
 * agree (counts exactly, every number within 1e-9 relative), the ClickHouse one must name its
 * store, and ten computations of the same data must give bit-identical numbers.
 */
const T0 = Date.UTC(2033, 4, 1, 12);
const UNITS = 150;
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse differential tests are skipped.`);

/** Fractional amounts, so the sums are not integers (a non-associative Float64 sum would show). */
function amountsOf(variant: string, i: number): { pre: number[]; post: number[]; sessions: number } {
  const seed = (i * 7919 + (variant === 'control' ? 13 : 101)) % 997;
  const converts = seed % (variant === 'control' ? 4 : 3) === 0;
  const post = converts ? Array.from({ length: 1 + (seed % 3) }, (_, j) => ((seed * 37 + j * 11) % 400) / 7 + 0.1) : [];
  if (i === 3) post.push(9876.54321);
  const pre = seed % 2 === 0 ? [((seed * 13) % 300) / 3 + 0.01] : [];
  return { pre, post, sessions: 1 + (seed % 4) };
}

async function scenario(server: TestServer, clock: ManualClock): Promise<{ key: string; experimentId: string }> {
  clock.set(T0);
  const { key, environmentId } = await server.bootstrap('ClickHouse differential');
  const revenue = { event_key: 'buy', kind: 'revenue', property_path: 'order.amount' };
  const ids: Record<string, string> = {};
  ids.converted = await createMetric(server, key, { key: 'converted', event_key: 'buy', kind: 'binary' });
  ids.revenue = await createMetric(server, key, { key: 'revenue', ...revenue, aggregation: 'sum', capping: { type: 'absolute', value: 150 } });
  ids.revenue_p90 = await createMetric(server, key, { key: 'revenue_p90', ...revenue, aggregation: 'sum', capping: { type: 'percentile', value: 0.9 } });
  ids.avg = await createMetric(server, key, { key: 'avg', ...revenue, aggregation: 'mean' });
  ids.orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
  ids.sessions = await createMetric(server, key, { key: 'sessions', event_key: 'session', kind: 'count' });
  ids.per_session = await createMetric(server, key, {
    key: 'per_session',
    kind: 'ratio',
    numerator_metric_id: ids.revenue_p90,
    denominator_metric_id: ids.sessions,
  });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: 'differential',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    dimensions: ['country'],
    primary_metric_id: ids.revenue_p90,
    guardrail_metric_ids: [ids.converted, ids.revenue, ids.avg, ids.orders, ids.per_session],
    variance_reduction: { method: 'cuped', lookback_days: 7 },
    decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 10 },
  });
  const units = await exposeExactly(server, key, experiment, { control: UNITS, treatment: UNITS });
  const events: OutgoingEvent[] = [];
  for (const [variant, list] of Object.entries(units)) {
    list.forEach((unit_id, i) => {
      const { pre, post, sessions } = amountsOf(variant, i);
      pre.forEach((amount) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 - 2 * DAY, properties: { order: { amount } } }));
      post.forEach((amount, j) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 + (j + 1) * HOUR, properties: { order: { amount } } }));
      for (let s = 0; s < sessions; s += 1) events.push({ event_key: 'session', unit_id, occurred_at: T0 + (s + 1) * 30 * 60_000 });
      // Late: received 9 days after it occurred, inside no window (before the exposure).
      if (i % 10 === 0) events.push({ event_key: 'buy', unit_id, occurred_at: T0 - 9 * DAY, properties: { order: { amount: 5 } } });
    });
  }
  clock.set(T0 + 6 * HOUR);
  await sendEvents(server, key, events);
  // A unit re-bucketed: its old exposure is superseded (mirrored with its mark), the new one counts.
  const moved = units.control?.[0] as string;
  const deleted = await server.request('DELETE', `/v1/assignments/${experiment.key}/${moved}`, { key });
  expect(deleted.status, deleted.text).toBe(204);
  const again = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: moved, context: { country: 'fr' } } });
  expect(again.status, again.text).toBe(200);
  return { key, experimentId: experiment.id };
}

suite(`analysis in ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const sqliteClock = new ManualClock(T0);
  const clickhouseClock = new ManualClock(T0);
  let sqlite: TestServer;
  let clickhouse: TestServer;
  let ours: { key: string; experimentId: string };
  let theirs: { key: string; experimentId: string };

  beforeAll(async () => {
    sqlite = await startTestServer('sqlite', { clock: sqliteClock });
    clickhouse = await startTestServer('sqlite', { clock: clickhouseClock, config: { clickhouse: TEST_CLICKHOUSE } });
    theirs = await scenario(sqlite, sqliteClock);
    ours = await scenario(clickhouse, clickhouseClock);
  });
  afterAll(async () => {
    await sqlite?.close();
    await clickhouse?.close();
  });

  it('keeps events out of the primary database and computes the snapshot there, naming the store', async () => {
    const stored = await clickhouse.ctx.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(0);
    const snapshot = await compute(clickhouse, ours.key, ours.experimentId, 'full');
    expect(snapshot.computation).toMatchObject({ mode: 'full', store: 'clickhouse' });
    expect((await compute(sqlite, theirs.key, theirs.experimentId, 'full')).computation.store).toBe('sqlite');
  });

  it('equals the SQLite snapshot on the same data: counts exactly, every number within 1e-9 relative', async () => {
    const expected = await compute(sqlite, theirs.key, theirs.experimentId, 'full');
    const actual = await compute(clickhouse, ours.key, ours.experimentId, 'full');
    expect(actual.late_event_count).toBeGreaterThan(0);
    expect(actual.primary_metric.cap_applied).toBeGreaterThan(0);
    expect(actual.breakdowns.map((breakdown: any) => breakdown.dimension)).toEqual(['country', 'source']);
    expectSameNumbers(comparable(actual), comparable(expected), 'snapshot');
  });

  it('gives bit-identical numbers in ten computations of the same data', async () => {
    const documents = new Set<string>();
    for (let run = 0; run < 10; run += 1) documents.add(JSON.stringify(comparable(await compute(clickhouse, ours.key, ours.experimentId, 'full'))));
    expect(documents.size).toBe(1);
  });

  it('keeps units apart when their join keys collide', async () => {
    const expected = comparable(await compute(clickhouse, ours.key, ours.experimentId, 'full'));
    const key = unitJoinKey.expression;
    // Three keys for every unit id: each live unit shares its key with a third of the others and their events.
    unitJoinKey.expression = 'cityHash64(unit_id) % 3';
    try {
      expect(comparable(await compute(clickhouse, ours.key, ours.experimentId, 'full'))).toEqual(expected);
    } finally {
      unitJoinKey.expression = key;
    }
  });

  it('counts once an event of a drain that never committed, and of a batch delivered again', async () => {
    const before = await compute(clickhouse, ours.key, ours.experimentId, 'full');
    const db = clickhouse.ctx.db;
    const exposure = await db
      .selectFrom('exposures')
      .select(['unit_id', 'workspace_id'])
      .where('experiment_id', '=', ours.experimentId)
      .where('superseded_at', 'is', null)
      .limit(1)
      .executeTakeFirstOrThrow();
    const event = {
      id: '01JZZZZZZZZZZZZZZZZZZZZZZZ',
      workspace_id: exposure.workspace_id,
      unit_id: exposure.unit_id,
      event_key: 'session',
      properties: '{}',
      occurred_at: T0 + 2 * HOUR,
      received_at: T0 + 6 * HOUR,
      late: 0 as const,
      client_event_id: null,
    };
    const other = { ...event, id: '01JZZZZZZZZZZZZZZZZZZZZZZY' };
    const { persistToClickHouse } = await import('../../src/clickhouse/events.js');
    const ch = clickhouse.ctx.clickhouse!;
    const persist = persistToClickHouse(ch);
    const rows = async () => {
      const result = await ch.client.query({ query: `SELECT id FROM events WHERE id IN ('${event.id}', '${other.id}') ORDER BY id`, format: 'JSONEachRow' });
      return (await result.json<{ id: string }>()).map((row) => row.id);
    };
    // Inserted into ClickHouse, then the buffer's transaction rolls back (a drain killed before its commit).
    const killed = new Error('killed before the commit');
    const attempt = db.transaction().execute(async (trx) => {
      await persist(trx, [event]);
      throw killed;
    });
    await expect(attempt).rejects.toBe(killed);
    expect(await rows()).toEqual([event.id]);
    expect((await compute(clickhouse, ours.key, ours.experimentId, 'full')).computation.events_read).toBe(before.computation.events_read);
    // The next drain takes the same number back and deletes that attempt's rows before its own insert.
    await persist(db, [event]);
    expect(await rows()).toEqual([event.id]);
    // Delivered again (Redis: a drainer died between the commit and the acknowledgement), in a batch cut differently.
    await persist(db, [event, other], { redelivered: true });
    await persist(db, [event], { redelivered: true });
    expect(await rows()).toEqual([other.id, event.id]);
    await drainEvents(clickhouse);
    const after = await compute(clickhouse, ours.key, ours.experimentId, 'full');
    expect(after.computation.events_read).toBe(before.computation.events_read + 2);
  });
});

suite(`exact sums in ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { config: { clickhouse: TEST_CLICKHOUSE } });
  });
  afterAll(async () => server?.close());

  it('adds 2 million fractional terms to the same bits whatever the threads and blocks', async () => {
    const client = server.ctx.clickhouse!.client;
    const results = new Set<string>();
    for (const [threads, block] of [
      [1, 65536],
      [2, 1000],
      [4, 777],
      [2, 65536],
      [3, 12345],
    ] as const) {
      const result = await client.query({
        query: `SELECT ${exactSum('x')} AS s FROM (SELECT (number * 2654435761 % 1000003) / 7.3 + 1e-7 * number AS x FROM numbers(2000000))`,
        format: 'JSONEachRow',
        clickhouse_settings: { max_threads: threads, max_block_size: String(block) },
      });
      const [row] = await result.json<{ s: number }>();
      results.add(String(row?.s));
    }
    expect(results.size).toBe(1);
  });

  it("counts a binary metric's 50,000 converted units as exactly 50,000 (a Decimal256 sum came back as 50000.00000000001)", async () => {
    const client = server.ctx.clickhouse!.client;
    const params = new Params();
    const binary = { event_key: 'buy', kind: 'binary', aggregation: 'count', window_ms: DAY, value_keys: null, cap: null } as const;
    const columns = metricAggregates(params, binary, 0).join(', ');
    const result = await client.query({
      query: `SELECT ${columns} FROM (SELECT toFloat64(number % 10 = 0) AS m0 FROM numbers(500000)) AS u`,
      query_params: params.values,
      format: 'JSONEachRow',
    });
    const [row] = await result.json<Record<string, unknown>>();
    expect([row?.n0, row?.s0, row?.q0, row?.c0].map(Number)).toEqual([500000, 50000, 50000, 50000]);
  });
});
