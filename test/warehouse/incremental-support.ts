// Incremental refreshes of metrics on fact tables (docs/warehouse.md "Incremental refresh"), the
// scenario both sources run through HTTP: units exposed, fact rows placed in the source, snapshots
// computed incrementally and in full (POST .../results/compute?mode=full) as rows arrive late,
// inside and outside the restatement window, and as new units are exposed. The source is only
// told to add rows (`insert`): what a team's pipeline does.
import { expect } from 'vitest';
import { assignUnits, compute, createExperiment, createMetric, DAY, HOUR, TWO_ARMS, type ManualClock } from '../analysis/support.js';
import type { Bootstrap, TestServer } from '../support/server.js';
import { expectSameSnapshot } from './snapshot-support.js';

export const T0 = Date.UTC(2034, 2, 6, 12);
const KEY = 'incremental-facts';
export const FACT_SQL = 'SELECT unit_id, occurred_at, amount FROM facts';

export interface FactRow {
  unit_id: string;
  at: number;
  amount: number | null;
}

/** The first units' rows: before the exposure (the CUPED lookback), in the first hours, days later; some without an amount. */
export function firstRows(units: readonly string[]): FactRow[] {
  return units.flatMap((unit, i) => [
    ...(i % 3 === 0 ? [{ unit_id: unit, at: T0 - 2 * DAY, amount: 4 + (i % 5) }] : []),
    { unit_id: unit, at: T0 + ((i % 5) + 1) * HOUR, amount: i % 7 === 0 ? null : 3 + ((i * 7) % 17) },
    { unit_id: unit, at: T0 + 2 * DAY + i * 600_000, amount: 1.25 * (i % 11) },
    ...(i % 2 === 0 ? [{ unit_id: unit, at: T0 + 6 * DAY, amount: 30 + (i % 13) }] : []),
  ]);
}

/** Sum of the primary (a count of rows in each unit's window) over the variants. */
export function countedRows(snapshot: any): number {
  return snapshot.per_variant.reduce((total: number, variant: any) => total + Math.round(variant.observed_rate * variant.sample_size), 0);
}

/** The two snapshots agree everywhere but their computation (counts exactly, the rest to 1e-9). */
export function expectSameResults(incremental: any, full: any): void {
  expect(expectSameSnapshot(full, incremental)).toBeGreaterThan(50);
}

/** Verdict's side: the source, the fact table, five metrics (count primary, binary, sum with a percentile cap, mean, capped sum), CUPED, and the experiment. */
export async function defineExperiment(server: TestServer, boot: Bootstrap, kind: 'postgres' | 'clickhouse', url: string): Promise<string> {
  const source = await server.request('POST', '/v1/data-sources', { key: boot.key, body: { name: 'Warehouse', kind, url } });
  expect(source.status, source.text).toBe(201);
  const table = await server.request('POST', '/v1/fact-tables', {
    key: boot.key,
    body: { data_source_id: source.body.id, name: 'Facts', sql: FACT_SQL, unit_id_column: 'unit_id', timestamp_column: 'occurred_at' },
  });
  expect(table.status, table.text).toBe(201);
  expect(table.body.restatement_hours).toBe(48);
  const fact_table_id = table.body.id as string;
  const metric = (key: string, body: Record<string, unknown>) =>
    createMetric(server, boot.key, { key, name: key, fact_table_id, unit_dedup_window: 'P30D', ...body });
  const orders = await metric('orders', { kind: 'count' });
  const bought = await metric('bought', { kind: 'binary' });
  const revenue = await metric('revenue', { kind: 'revenue', aggregation: 'sum', column: 'amount', capping: { type: 'percentile', value: 0.9 } });
  const basket = await metric('basket', { kind: 'revenue', aggregation: 'mean', column: 'amount' });
  const capped = await metric('capped', { kind: 'revenue', aggregation: 'sum', column: 'amount', capping: { type: 'absolute', value: 20 } });
  const experiment = await createExperiment(server, boot.key, {
    environment_id: boot.environmentId,
    key: KEY,
    variants: TWO_ARMS,
    primary_metric_id: orders,
    guardrail_metric_ids: [bought],
    secondary_metric_ids: [revenue, basket, capped],
    variance_reduction: { method: 'cuped', lookback_days: 7 },
  });
  return experiment.id as string;
}

export const assign = (server: TestServer, boot: Bootstrap, units: readonly string[]) => assignUnits(server, boot.key, KEY, units);

/** Rows of `rows` from `from` on for units exposed at `exposedAt`: inside the 7-day lookback (unless `windowOnly`) or the 30-day window. */
function inPeriods(rows: readonly FactRow[], exposedAt: ReadonlyMap<string, number>, from: number | null, windowOnly: boolean): number {
  return rows.filter((row) => {
    const exposed = exposedAt.get(row.unit_id);
    const start = windowOnly ? exposed : (exposed ?? 0) - 7 * DAY;
    return exposed !== undefined && row.at >= (start as number) && row.at < exposed + 30 * DAY && (from === null || row.at >= from);
  }).length;
}

/**
 * The rows a refresh reads from `from` on: three reads, the metrics on `amount` sharing one (window
 * and lookback), those counting rows another, and the percentile cap the window of `amount` alone.
 */
export function rowsRead(rows: readonly FactRow[], exposedAt: ReadonlyMap<string, number>, from: number | null): number {
  return 2 * inPeriods(rows, exposedAt, from, false) + inPeriods(rows, exposedAt, from, true);
}

export interface Scenario {
  server: TestServer;
  clock: ManualClock;
  boot: Bootstrap;
  experimentId: string;
  insert(rows: readonly FactRow[]): Promise<void>;
}

export const incremental = (scenario: Scenario) => compute(scenario.server, scenario.boot.key, scenario.experimentId);
export const full = (scenario: Scenario) => compute(scenario.server, scenario.boot.key, scenario.experimentId, 'full');
