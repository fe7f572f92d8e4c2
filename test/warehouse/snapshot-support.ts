// The differential check of snapshots (issue #60): one workspace analyses the events it was sent
// with metrics on events; a second workspace, with the same experiment key (so the same units in
// the same variants, the bucketing being the key's and the unit's), reads the same events from a
// fact table on a source with the same metrics defined on it. Both snapshots are computed through
// HTTP and must agree: counts exactly, every other number to 1e-9.
import { expect } from 'vitest';
import { assignUnits, createExperiment, createMetric, DAY, sendEvents, TWO_ARMS, type ManualClock } from '../analysis/support.js';
import type { Bootstrap, TestServer } from '../support/server.js';
import { eventsOf, T0 } from './differential-support.js';

export { T0 };

export const EXPERIMENT_KEY = 'warehouse-snapshot';
export const UNITS = Array.from({ length: 240 }, (_, i) => `s-${i}`);

type Definition = { key: string; body: Record<string, unknown>; onEvents: Record<string, unknown>; onFacts: Record<string, unknown> };

const purchase = (extra: Record<string, unknown>, column: string | null): Pick<Definition, 'onEvents' | 'onFacts'> => ({
  onEvents: { event_key: 'purchase', ...(column ? { property_path: column } : {}), ...extra },
  onFacts: { filter: "event_key = 'purchase'", ...(column ? { column } : {}), ...extra },
});

/** Every kind: binary, count, sum, mean, ratio; absolute and percentile caps; a one-day window. */
const DEFINITIONS: Definition[] = [
  { key: 'revenue', body: { kind: 'revenue', aggregation: 'sum', capping: { type: 'percentile', value: 0.9 } }, ...purchase({}, 'amount') },
  { key: 'bought', body: { kind: 'binary' }, ...purchase({}, null) },
  { key: 'visits', body: { kind: 'count', unit_dedup_window: 'P1D' }, onEvents: { event_key: 'visit' }, onFacts: { filter: "event_key = 'visit'" } },
  { key: 'basket', body: { kind: 'revenue', aggregation: 'mean' }, ...purchase({}, 'amount') },
  { key: 'capped', body: { kind: 'revenue', aggregation: 'sum', capping: { type: 'absolute', value: 20 } }, ...purchase({}, 'amount') },
  { key: 'amount', body: { kind: 'revenue', aggregation: 'sum' }, ...purchase({}, 'amount') },
  { key: 'purchases', body: { kind: 'count' }, ...purchase({}, null) },
];

/** Creates the metrics (on events, or on the fact table) and the experiment (with `extra` fields) using them; returns the experiment's id. */
export async function defineExperiment(
  server: TestServer,
  boot: Bootstrap,
  factTableId: string | null,
  cuped: boolean,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const ids: Record<string, string> = {};
  for (const definition of DEFINITIONS) {
    const source = factTableId === null ? definition.onEvents : { fact_table_id: factTableId, ...definition.onFacts };
    ids[definition.key] = await createMetric(server, boot.key, { key: definition.key, ...definition.body, ...source });
  }
  ids.per_purchase = await createMetric(server, boot.key, {
    key: 'per_purchase',
    kind: 'ratio',
    numerator_metric_id: ids.amount,
    denominator_metric_id: ids.purchases,
  });
  const experiment = await createExperiment(server, boot.key, {
    environment_id: boot.environmentId,
    key: EXPERIMENT_KEY,
    variants: TWO_ARMS,
    primary_metric_id: ids.revenue,
    guardrail_metric_ids: [ids.bought, ids.visits],
    secondary_metric_ids: [ids.basket, ids.capped, ids.per_purchase],
    ...(cuped ? { variance_reduction: { method: 'cuped', lookback_days: 7 } } : {}),
    ...extra,
  });
  return experiment.id as string;
}

export interface Seeded {
  events: { boot: Bootstrap; experimentId: string };
  facts: { boot: Bootstrap; experimentId: string };
  /** The events as the first workspace stored them: what the fact table must hold. */
  stored: Array<{ unit_id: string; event_key: string; occurred_at: number | string | bigint; properties: string }>;
}

/**
 * The two workspaces: the units assigned at T0 in both, the events sent to the first 15 days
 * later. `placeFacts` puts the stored events in the source and answers the data source URL; the
 * second workspace then gets the data source, a fact table over them, and the same metrics.
 */
export async function seedBoth(
  server: TestServer,
  clock: ManualClock,
  placeFacts: (stored: Seeded['stored']) => Promise<string>,
  kind: 'postgres' | 'clickhouse',
  cuped = true,
): Promise<Seeded> {
  clock.set(T0);
  const eventsBoot = await server.bootstrap('Events');
  const factsBoot = await server.bootstrap('Facts');
  const eventsExperiment = await defineExperiment(server, eventsBoot, null, cuped);
  await assignUnits(server, eventsBoot.key, EXPERIMENT_KEY, UNITS);
  clock.set(T0 + 15 * DAY);
  await sendEvents(server, eventsBoot.key, UNITS.flatMap(eventsOf));
  const stored = await server.ctx.db
    .selectFrom('events')
    .select(['unit_id', 'event_key', 'occurred_at', 'properties'])
    .where('workspace_id', '=', eventsBoot.workspaceId)
    .execute();
  const url = await placeFacts(stored);
  // The second workspace's experiment starts and exposes its units at T0 too, as the first's did.
  const source = await server.request('POST', '/v1/data-sources', { key: factsBoot.key, body: { name: 'Shop', kind, url } });
  expect(source.status, source.text).toBe(201);
  const tableAnswer = await server.request('POST', '/v1/fact-tables', {
    key: factsBoot.key,
    body: {
      data_source_id: source.body.id,
      name: 'Events',
      sql: 'SELECT unit_id, occurred_at, amount, event_key FROM events',
      unit_id_column: 'unit_id',
      timestamp_column: 'occurred_at',
    },
  });
  expect(tableAnswer.status, tableAnswer.text).toBe(201);
  clock.set(T0);
  const factsExperiment = await defineExperiment(server, factsBoot, tableAnswer.body.id as string, cuped);
  await assignUnits(server, factsBoot.key, EXPERIMENT_KEY, UNITS);
  clock.set(T0 + 15 * DAY);
  return { events: { boot: eventsBoot, experimentId: eventsExperiment }, facts: { boot: factsBoot, experimentId: factsExperiment }, stored };
}

/** What differs between the two workspaces by construction: ids, times of computation, and what only events have (late events). */
const IGNORED = new Set(['id', 'experiment_id', 'workspace_id', 'computed_at', 'computation', 'late_event_count', 'late_events', 'breakdowns']);

/** Walks both snapshots: integers equal, other numbers within 1e-9 (relative above 1), everything else equal. */
export function expectSameSnapshot(fromEvents: unknown, fromFacts: unknown, path = 'snapshot'): number {
  if (typeof fromEvents === 'number' && typeof fromFacts === 'number') {
    if (Number.isInteger(fromEvents) && Number.isInteger(fromFacts)) expect(fromFacts, path).toBe(fromEvents);
    else expect(Math.abs(fromFacts - fromEvents), `${path}: ${fromFacts} vs ${fromEvents}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(fromEvents)));
    return 1;
  }
  if (Array.isArray(fromEvents)) {
    expect(Array.isArray(fromFacts) && fromFacts.length, path).toBe(fromEvents.length);
    return fromEvents.reduce((count: number, item, index) => count + expectSameSnapshot(item, (fromFacts as unknown[])[index], `${path}[${index}]`), 0);
  }
  if (fromEvents !== null && typeof fromEvents === 'object') {
    expect(fromFacts !== null && typeof fromFacts === 'object', path).toBe(true);
    const keys = Object.keys(fromEvents).filter((key) => !IGNORED.has(key) && !key.endsWith('_id'));
    expect(
      Object.keys(fromFacts as object)
        .filter((key) => !IGNORED.has(key) && !key.endsWith('_id'))
        .sort(),
      path,
    ).toEqual(keys.sort());
    return keys.reduce((count, key) => count + expectSameSnapshot((fromEvents as any)[key], (fromFacts as any)[key], `${path}.${key}`), 0);
  }
  expect(fromFacts, path).toEqual(fromEvents);
  return 0;
}
