import type { Executor } from '../../../db/database.js';
import type { ShippedExposure } from './spec.js';

/** The experiment's live (not superseded) exposures: one per unit, what the source's statement joins its rows to. */
export async function liveExposures(executor: Executor, workspaceId: string, experimentId: string): Promise<ShippedExposure[]> {
  const rows = await executor
    .selectFrom('exposures')
    .select(['unit_id', 'variant_key', 'exposed_at'])
    .where('workspace_id', '=', workspaceId)
    .where('experiment_id', '=', experimentId)
    .where('superseded_at', 'is', null)
    .orderBy('unit_id')
    .execute();
  return rows.map((row) => ({ unit_id: row.unit_id, variant_key: row.variant_key, exposed_at: Number(row.exposed_at) }));
}
