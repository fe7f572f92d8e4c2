/** The committed state of an experiment's rollups in ClickHouse (rollup_state's newest row: rollups.ts commits it). */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { queryRows } from './aggregate.js';
import { Params } from './sql-parts.js';
import { toNumber } from '../store/fold.js';

export interface State {
  version: number;
  watermark: number;
  unitsFrom: number;
  /** Per slot (metric id), the generation its rows are in and its definition hash. */
  slots: Map<string, { generation: number; hash: string }>;
  /** The hash of the plan its totals are of ('' without), and the totals (totals.ts). */
  totalsPlan: string;
  totals: string;
  /** The newest mirrored exposure version when it began (rollup-sql.ts RefreshScope.mirrorSeen). */
  mirrorSeen: number;
  /** Each metric's slices kept with the totals (metric-slices.ts), '' without. */
  slices: string;
}

export async function loadState(ch: ClickHouse, experimentId: string): Promise<State | null> {
  const params = new Params();
  const rows = await queryRows(
    ch,
    `SELECT latest.1 AS version, latest.2 AS watermark, latest.3 AS units_from, latest.4 AS slot_ids, latest.5 AS slot_generations, latest.6 AS definitions,
       latest.7 AS totals_plan, latest.8 AS totals, latest.9 AS mirror_seen, latest.10 AS slices
     FROM (SELECT argMax((version, watermark, units_from, slot_ids, slot_generations, definitions, totals_plan, totals, mirror_seen, slices), version) AS latest, count() AS states
           FROM rollup_state WHERE experiment_id = ${params.string(experimentId)}) WHERE states > 0`,
    params,
  );
  const row = rows[0];
  if (!row) return null;
  const hashes = JSON.parse(String(row.definitions)) as Record<string, string>;
  const generations = row.slot_generations as unknown[];
  const slots = new Map((row.slot_ids as string[]).map((id, index) => [id, { generation: toNumber(generations[index]), hash: hashes[id] ?? '' }]));
  return {
    version: toNumber(row.version),
    watermark: toNumber(row.watermark),
    unitsFrom: toNumber(row.units_from),
    slots,
    totalsPlan: String(row.totals_plan),
    totals: String(row.totals),
    mirrorSeen: toNumber(row.mirror_seen),
    slices: String(row.slices),
  };
}
