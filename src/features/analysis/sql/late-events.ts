/**
 * Late events (docs/analysis.md "Late events"): events received 7 to 30 days after they occurred
 * (`late` = 1), whose key is one of the experiment's metrics' and whose unit has a live exposure
 * in the experiment, split by what they did to the results. Only the ones inside a metric's
 * window count; a backfill of what a unit did before its exposure counts in no metric (CUPED may
 * read it as the pre-period covariate), and one after every window of its key counts in none
 * either. Driven from the small partial index `events_late_idx`; the live exposure is unique per
 * unit (`exposures_live_unique`), so each event counts once, with its unit's exposure or not at all.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { LateEvents, LateEventScope, MetricSpec } from '../store/contract.js';
import { toNumber } from '../store/fold.js';

/** Every (event key, window) the metrics read, ratio components included. */
function windowsOf(metrics: readonly MetricSpec[]): Array<{ key: string; window: number }> {
  const windows = new Map<string, number>();
  for (const spec of metrics.flatMap((metric) => [metric, ...(metric.denominator ? [metric.denominator] : [])])) {
    windows.set(spec.event_key, Math.max(windows.get(spec.event_key) ?? 0, spec.window_ms));
  }
  return [...windows].map(([key, window]) => ({ key, window }));
}

export async function countLateEvents(executor: Executor, scope: LateEventScope, metrics: readonly MetricSpec[]): Promise<LateEvents> {
  const windows = windowsOf(metrics);
  if (windows.length === 0) return { total: 0, counted: 0, before_exposure: 0, outside_window: 0 };
  // An event counts when it falls in the widest window of a metric reading its key.
  const inWindow = sql.join(
    windows.map(({ key, window }) => sql`(l.event_key = ${key} AND l.occurred_at < l.exposed_at + ${window})`),
    sql` OR `,
  );
  const beforeStop = scope.eventsBefore === null ? sql`` : sql` AND l.occurred_at < ${scope.eventsBefore}`;
  // Each late event finds its unit's live exposure through exposures_live_unique, once (the
  // materialised list): as a join, PostgreSQL hashes every exposure of the experiment instead (a
  // scan of all units, 0.9 s at 200,000 units, in every snapshot, the incremental ones too).
  const result = await sql<{ total: unknown; counted: unknown; before_exposure: unknown }>`WITH l AS MATERIALIZED (
      SELECT e.event_key AS event_key, e.occurred_at AS occurred_at,
        (SELECT x.exposed_at FROM exposures AS x WHERE x.experiment_id = ${scope.experimentId} AND x.unit_id = e.unit_id AND x.superseded_at IS NULL) AS exposed_at
      FROM events AS e
      WHERE e.workspace_id = ${scope.workspaceId} AND e.late = 1 AND e.event_key IN (${sql.join(windows.map(({ key }) => key))}))
    SELECT COUNT(*) AS total,
      SUM(CASE WHEN l.occurred_at < l.exposed_at THEN 1 ELSE 0 END) AS before_exposure,
      SUM(CASE WHEN l.occurred_at >= l.exposed_at AND (${inWindow})${beforeStop} THEN 1 ELSE 0 END) AS counted
    FROM l WHERE l.exposed_at IS NOT NULL`.execute(executor);
  const row = result.rows[0];
  const total = toNumber(row?.total);
  const counted = toNumber(row?.counted ?? 0);
  const beforeExposure = toNumber(row?.before_exposure ?? 0);
  return { total, counted, before_exposure: beforeExposure, outside_window: total - counted - beforeExposure };
}
