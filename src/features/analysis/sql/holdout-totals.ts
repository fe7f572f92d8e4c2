/**
 * A holdout's totals in the SQL store (store/contract.ts, HoldoutTotalsInput): its first contacts
 * as the units, each in its group (held out or sampled, by its stored buckets under the holdout's
 * percentage now) and counted from its first contact, with the same per-unit values and sums as an
 * experiment's snapshot (aggregate.ts's unitValueColumns, eventJoin and metricColumns).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { eventJoin, metricColumns, unitValueColumns } from './aggregate.js';
import type { HoldoutTotals, HoldoutTotalsInput, VariantTotals } from '../store/contract.js';
import { addVariantRow, toNumber } from '../store/fold.js';

/** Every contact in either group, with its first contact as its `exposed_at` and its group as its `variant_key`. */
function contacts(input: HoldoutTotalsInput): RawBuilder<unknown> {
  const held = sql.lit(input.heldOutBuckets);
  return sql`(SELECT c.unit_id AS unit_id, c.first_seen_at AS exposed_at,
        CASE WHEN c.bucket < ${held} THEN 'held_out' ELSE 'sample' END AS variant_key
      FROM holdout_contacts AS c
      WHERE c.holdout_id = ${input.holdoutId} AND c.workspace_id = ${input.workspaceId}
        AND (c.bucket < ${held} OR c.sample_bucket < ${sql.lit(input.sampleBuckets)})) AS x`;
}

export async function holdoutTotals(executor: Executor, seam: DialectSeam, reads: ReadPool, input: HoldoutTotalsInput): Promise<HoldoutTotals> {
  const readsEvents = input.metrics.length > 0;
  const values = [...unitValueColumns(seam, input.metrics), ...(readsEvents ? [sql`, COUNT(e.event_key) AS ev`] : [])];
  const columns = input.metrics.flatMap((metric, index) => metricColumns(metric, index));
  const selected = sql.join(
    [...columns.map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`), ...(readsEvents ? [sql`, SUM(u.ev) AS ev`] : [])],
    sql``,
  );
  const join = eventJoin({ metrics: input.metrics, workspaceId: input.workspaceId, eventsBefore: input.eventsBefore });
  const perUnit = sql`SELECT x.variant_key AS variant_key${sql.join(values, sql``)} FROM ${contacts(input)}${join} GROUP BY x.unit_id, x.exposed_at, x.variant_key`;
  const query = sql<Record<string, unknown>>`SELECT u.variant_key AS variant_key, COUNT(*) AS units${selected} FROM (${perUnit}) AS u GROUP BY u.variant_key`;
  const [rows = []] = await reads.all([query.compile(executor)]);
  const totals = new Map<string, VariantTotals>();
  let eventsRead = 0;
  for (const row of rows) {
    addVariantRow(totals, row, input.metrics.length);
    eventsRead += toNumber(row.ev);
  }
  return { totals, eventsRead };
}
