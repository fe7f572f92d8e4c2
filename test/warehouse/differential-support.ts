// The differential check of the analysis on a source (docs/warehouse.md "The analysis on the
// source"): six metrics as the SQL store reads them from Verdict's events and as a source reads
// them from a fact table holding the same events, the events of 240 units, and the comparison.
import { expect } from 'vitest';
import type { AppContext } from '../../src/context.js';
import type { DataSourceKind } from '../../src/db/tables/warehouse.js';
import { withSource, type OpenedFactTable, type SessionLimits } from '../../src/features/data-sources/read.js';
import { createAnalysisStore } from '../../src/features/analysis/store/create.js';
import type { MetricSpec, VariantTotals } from '../../src/features/analysis/store/contract.js';
import { unitRefresher } from '../../src/features/analysis/warehouse/incremental.js';
import { liveExposures } from '../../src/features/analysis/warehouse/exposures.js';
import type { WarehouseMetricSpec } from '../../src/features/analysis/warehouse/spec.js';
import { assignUnits, createExperiment, DAY, HOUR, TWO_ARMS, sendEvents, type ManualClock, type OutgoingEvent } from '../analysis/support.js';
import type { TestServer } from '../support/server.js';

export const T0 = Date.UTC(2033, 6, 1, 12);
export const WEEK = 7 * DAY;
export const FACTS = 'SELECT unit_id, occurred_at, amount, event_key FROM events';

/** Each metric as the SQL store reads it (event key, property path) and as the source reads it (fact table, column, filter). */
export const METRICS: Array<{ name: string; events: MetricSpec; fact: WarehouseMetricSpec }> = [
  ['bought', 'binary', 'count', null, null, 'purchase', WEEK],
  ['purchases', 'count', 'count', null, null, 'purchase', WEEK],
  ['revenue', 'revenue', 'sum', 'amount', null, 'purchase', WEEK],
  ['basket', 'revenue', 'mean', 'amount', null, 'purchase', WEEK],
  ['capped revenue', 'revenue', 'sum', 'amount', 20, 'purchase', WEEK],
  ['visits in a day', 'count', 'count', null, null, 'visit', DAY],
].map(([name, kind, aggregation, column, cap, eventKey, window]) => {
  const base = { kind, aggregation, window_ms: window, cap } as Pick<MetricSpec, 'kind' | 'aggregation' | 'window_ms' | 'cap'>;
  return {
    name: name as string,
    events: { ...base, event_key: eventKey as string, value_keys: column === null ? null : [column as string] },
    fact: {
      ...base,
      fact: {
        sql: FACTS,
        unit_id_column: 'unit_id',
        timestamp_column: 'occurred_at',
        column: column as string | null,
        filter: `event_key = '${eventKey as string}'`,
      },
    },
  };
});

/** Unit i's events: purchases in and out of the week after exposure, some without an amount, visits around the first day. */
export function eventsOf(unit: string, i: number): OutgoingEvent[] {
  const events: OutgoingEvent[] = [];
  for (let k = 0; k < i % 4; k += 1) {
    events.push({ event_key: 'purchase', unit_id: unit, occurred_at: T0 + (k * 37 + i) * HOUR, properties: { amount: ((i * 13 + k * 7) % 40) + 0.25 } });
  }
  if (i % 5 === 0) events.push({ event_key: 'purchase', unit_id: unit, occurred_at: T0 - HOUR, properties: { amount: 99 } });
  if (i % 6 === 0) events.push({ event_key: 'purchase', unit_id: unit, occurred_at: T0 + 2 * HOUR, properties: { note: 'no amount' } });
  if (i % 7 === 0) events.push({ event_key: 'purchase', unit_id: unit, occurred_at: T0 + WEEK + HOUR, properties: { amount: 5 } });
  for (let k = 0; k < i % 3; k += 1) events.push({ event_key: 'visit', unit_id: unit, occurred_at: T0 + (k * 20 + (i % 9)) * HOUR });
  return events;
}

export function expectSameTotals(fromEvents: Map<string, VariantTotals>, fromSource: Map<string, VariantTotals>): void {
  expect([...fromSource.keys()].sort()).toEqual([...fromEvents.keys()].sort());
  for (const [variant, expected] of fromEvents) {
    const actual = fromSource.get(variant) as VariantTotals;
    expect(actual.units, variant).toBe(expected.units);
    METRICS.forEach(({ name }, index) => {
      const [want, got] = [expected.metrics[index], actual.metrics[index]];
      const what = `${variant} ${name}`;
      expect(got?.n, `${what} n`).toBe(want?.n);
      expect(got?.conversions, `${what} conversions`).toBe(want?.conversions);
      for (const field of ['sum', 'sum_of_squares'] as const) {
        const [a, b] = [got?.[field] ?? NaN, want?.[field] ?? NaN];
        expect(Math.abs(a - b), `${what} ${field}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
      }
    });
  }
}

/**
 * The experiment's totals both ways: by the SQL store from Verdict's events, and by the source
 * (`kind` at `url`) from the fact table, with the experiment's live exposures shipped to it.
 */
export async function totalsBothWays(
  ctx: AppContext,
  scope: { workspaceId: string; experimentId: string },
  source: { kind: DataSourceKind; url: string; limits: SessionLimits },
  eventsBefore: number | null,
): Promise<{ fromEvents: Map<string, VariantTotals>; fromSource: Map<string, VariantTotals> }> {
  const view = await createAnalysisStore(ctx).view();
  const metrics = METRICS.map((metric) => metric.events);
  const fromEvents = await view.aggregate({ ...scope, metrics, eventsBefore, chunkUnits: null });
  // The source's side as a snapshot computes it in full: the refresher's per-unit statement and fold.
  const refresher = unitRefresher(ctx, scope, 'full', () => liveExposures(ctx.db, scope.workspaceId, scope.experimentId));
  const table: OpenedFactTable = {
    ...{ id: 'facts', name: 'facts', sql: FACTS, unit_id_column: 'unit_id', timestamp_column: 'occurred_at', restatement_hours: 0 },
    ...{ data_source_id: 'source', kind: source.kind, url: source.url, limits: source.limits },
  };
  const fromSource = new Map<string, VariantTotals>();
  await withSource(source.kind, source.url, source.limits, async (session) => {
    for (const [index, { fact }] of METRICS.entries()) {
      for (const [key, variant] of await refresher.totals(table, session, fact, eventsBefore)) {
        const entry = fromSource.get(key) ?? { variant_key: key, units: variant.units, metrics: [] };
        entry.metrics[index] = variant.metrics[0] as VariantTotals['metrics'][number];
        fromSource.set(key, entry);
      }
    }
  });
  return { fromEvents: fromEvents.totals, fromSource };
}

/**
 * The experiment both ways read: 240 units assigned at T0, their events sent 15 days later, and
 * the events as Verdict stored them (to be placed in the source's fact table).
 */
export async function seedExperiment(server: TestServer, clock: ManualClock) {
  const boot = await server.bootstrap();
  const experiment = await createExperiment(server, boot.key, { environment_id: boot.environmentId, key: 'warehouse-diff', variants: TWO_ARMS });
  const units = Array.from({ length: 240 }, (_, i) => `w-${i}`);
  await assignUnits(server, boot.key, 'warehouse-diff', units);
  clock.set(T0 + 15 * DAY);
  await sendEvents(server, boot.key, units.flatMap(eventsOf));
  const stored = await server.ctx.db
    .selectFrom('events')
    .select(['unit_id', 'event_key', 'occurred_at', 'properties'])
    .where('workspace_id', '=', boot.workspaceId)
    .execute();
  return { workspaceId: boot.workspaceId, experimentId: experiment.id, stored };
}
