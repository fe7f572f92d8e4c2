/** The snapshot's computation.warehouse: how the metrics on fact tables were read (docs/warehouse.md "Incremental refresh"). */
import Type, { type Static } from 'typebox';
import { toIsoOrNull } from '../../../lib/time.js';
import type { WarehouseRefreshReport } from './incremental.js';

const NullableTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const WarehouseComputationSchema = Type.Object(
  {
    mode: Type.Enum(['incremental', 'full'], {
      description: 'incremental: each unit’s kept counts plus the rows from the previous cutoff on; full: every row read again, the kept state replaced',
    }),
    rows_read: Type.Integer({
      description:
        'fact rows the sources returned counts of (inside a unit’s periods), summed over the distinct reads: one per fact table, column, filter and periods (a percentile cap reads the window alone)',
    }),
    units_read_in_full: Type.Integer({ description: 'units whose whole history was read: exposed or re-exposed since the last refresh, or all on a full one' }),
    units_read_from_cutoff: Type.Integer({ description: 'units read only from the previous cutoff on' }),
    read_from: NullableTime('the earliest previous cutoff the incremental reads started from, or null when none did'),
    settled_before: NullableTime('rows before this are now kept in Verdict per unit; the next incremental refresh reads from here'),
  },
  { description: 'present when metrics read fact tables on a data source (docs/warehouse.md)' },
);
export type WarehouseComputation = Static<typeof WarehouseComputationSchema>;

export function warehouseComputationOf(report: WarehouseRefreshReport): WarehouseComputation {
  return { ...report, read_from: toIsoOrNull(report.read_from), settled_before: toIsoOrNull(report.settled_before) };
}
