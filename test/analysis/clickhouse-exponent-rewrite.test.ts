import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseJsonText } from '../../src/clickhouse/json-text.js';
import { migrateClickHouse } from '../../src/clickhouse/schema.js';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, createExperiment, createMetric, exposeExactly, HOUR, ManualClock, sendEvents, TWO_ARMS, type OutgoingEvent } from './support.js';
import { comparable, expectSameNumbers } from './snapshot-compare.js';

/**
 * ClickHouse migration 0004 (src/clickhouse/exponent-form-rewrite.ts): events drained before the
 * drain wrote integer literals beyond 64 bits in exponent form keep a text ClickHouse reads no
 * number from. The same events go through HTTP to a server on SQLite and to one with ClickHouse;
 * ClickHouse's rows are then put back in the old form (the text the SQL store keeps, as the drain
 * wrote it before the fix), so its snapshots lose those numbers. After the migration runs, the
 * full and the incremental snapshot (whose rollups summed the old rows) equal SQLite's again, and
 * every other text is byte for byte what it was.
 */
const T0 = Date.UTC(2033, 6, 1, 12);
const UNITS = 40;
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse exponent-form migration test is skipped.`);

/** Per unit i: the properties of its purchases, a third of them with a 64-bit-overflowing literal somewhere. */
function purchases(i: number): Array<Record<string, unknown>> {
  const amount = 3 + ((i * 37) % 50) / 4;
  const list: Array<Record<string, unknown>> = [{ amount, note: '18446744073709551616 in a string' }];
  if (i % 3 === 0) list.push({ amount: amount * 2, order_id: 2 ** 64 + i * 4096 });
  if (i % 3 === 1) list.push({ amount: amount + 1, nested: { ids: [-(2 ** 66), 2 ** 70] } });
  if (i % 5 === 0) list.push({ amount: 2 ** 65 });
  if (i % 7 === 0) list.push({ amount: 1, within: 18446744073709551615n.toString() });
  return list;
}

async function scenario(server: TestServer, clock: ManualClock): Promise<{ key: string; experimentId: string; workspaceId: string }> {
  clock.set(T0);
  const { key, environmentId, workspaceId } = await server.bootstrap('Exponent form');
  const revenue = await createMetric(server, key, { key: 'revenue', event_key: 'buy', kind: 'revenue', property_path: 'amount', aggregation: 'sum' });
  const orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: 'exponent-form',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    primary_metric_id: revenue,
    guardrail_metric_ids: [orders],
  });
  const units = await exposeExactly(server, key, { key: experiment.key, variants: TWO_ARMS }, { control: UNITS, treatment: UNITS });
  const events: OutgoingEvent[] = [];
  for (const list of Object.values(units))
    list.forEach((unit_id, i) =>
      purchases(i).forEach((properties, j) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 + (j + 1) * HOUR, properties })),
    );
  clock.set(T0 + 6 * HOUR);
  await sendEvents(server, key, events);
  return { key, experimentId: experiment.id, workspaceId };
}

async function texts(ch: ClickHouse, workspaceId: string): Promise<string[]> {
  const result = await ch.client.query({
    query: 'SELECT properties FROM events WHERE workspace_id = {workspace:String} ORDER BY properties',
    query_params: { workspace: workspaceId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ properties: string }>()).map((row) => row.properties);
}

/** Puts ClickHouse's rows back in the form drains wrote before the fix: the API's own text. */
async function seedOldForm(ch: ClickHouse, workspaceId: string): Promise<number> {
  const originals = [
    ...new Set(
      Array.from({ length: UNITS }, (_, i) => purchases(i))
        .flat()
        .map((properties) => JSON.stringify(properties)),
    ),
  ];
  const fixed = originals.map(clickhouseJsonText);
  const changed = originals.filter((text, index) => fixed[index] !== text);
  await ch.client.command({
    query: `ALTER TABLE events UPDATE properties = transform(properties, {fixed:Array(String)}, {original:Array(String)}, properties)
      WHERE workspace_id = {workspace:String}`,
    query_params: { fixed: changed.map(clickhouseJsonText), original: changed, workspace: workspaceId },
    clickhouse_settings: { mutations_sync: '2' },
  });
  return changed.length;
}

suite(`ClickHouse migration 0004: properties in exponent form${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const sqliteClock = new ManualClock(T0);
  const clickhouseClock = new ManualClock(T0);
  let sqlite: TestServer;
  let clickhouse: TestServer;
  let theirs: { key: string; experimentId: string };
  let ours: { key: string; experimentId: string; workspaceId: string };

  beforeAll(async () => {
    sqlite = await startTestServer('sqlite', { clock: sqliteClock });
    clickhouse = await startTestServer('sqlite', { clock: clickhouseClock, config: { clickhouse: TEST_CLICKHOUSE } });
    theirs = await scenario(sqlite, sqliteClock);
    ours = await scenario(clickhouse, clickhouseClock);
  }, 180_000);
  afterAll(async () => {
    await sqlite?.close();
    await clickhouse?.close();
  });

  it('rewrites events drained in the old form, so the full and incremental snapshots equal the SQL store again', { timeout: 120_000 }, async () => {
    const ch = clickhouse.ctx.clickhouse as ClickHouse;
    const expected = comparable(await compute(sqlite, theirs.key, theirs.experimentId, 'full'));
    const drained = await texts(ch, ours.workspaceId);
    expectSameNumbers(comparable(await compute(clickhouse, ours.key, ours.experimentId, 'full')), expected, 'before the old form');

    expect(await seedOldForm(ch, ours.workspaceId)).toBeGreaterThan(3);
    const oldForm = await texts(ch, ours.workspaceId);
    expect(oldForm).not.toEqual(drained);
    const broken = await compute(clickhouse, ours.key, ours.experimentId, 'full');
    const brokenIncremental = await compute(clickhouse, ours.key, ours.experimentId, 'incremental');
    // Old-form rows read no amount in ClickHouse: the revenue falls short of SQLite's (and the rollups keep that).
    expect(JSON.stringify(comparable(broken))).not.toBe(JSON.stringify(expected));
    expect(comparable(brokenIncremental)).toMatchObject({ primary_metric: (comparable(broken) as any).primary_metric });

    // As on a deployment that migrated 0001-0003 before this release: 0004 not yet in the ledger.
    await ch.client.command({ query: "DELETE FROM verdict_clickhouse_migrations WHERE name = '0004_properties_exponent_form'" });
    expect(await migrateClickHouse(ch)).toEqual(['0004_properties_exponent_form']);
    expect(await texts(ch, ours.workspaceId)).toEqual(drained);

    clickhouseClock.set(T0 + 7 * HOUR);
    sqliteClock.set(T0 + 7 * HOUR);
    const reference = comparable(await compute(sqlite, theirs.key, theirs.experimentId, 'full'));
    expectSameNumbers(comparable(await compute(clickhouse, ours.key, ours.experimentId, 'full')), reference, 'full');
    const incremental = comparable(await compute(clickhouse, ours.key, ours.experimentId, 'incremental')) as any;
    const { computation: _c, ...rest } = reference as any;
    const { computation: _i, ...refreshed } = incremental;
    expectSameNumbers(refreshed, rest, 'incremental');
    // Run again, it finds nothing left to rewrite.
    await ch.client.command({ query: "DELETE FROM verdict_clickhouse_migrations WHERE name = '0004_properties_exponent_form'" });
    expect(await migrateClickHouse(ch)).toEqual(['0004_properties_exponent_form']);
    expect(await texts(ch, ours.workspaceId)).toEqual(drained);
  });
});
