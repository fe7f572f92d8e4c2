/**
 * The exposures of an analysis-only experiment (docs/warehouse.md "Experiments assigned
 * elsewhere"), read from its assignment source before each snapshot and kept as the experiment's
 * live exposures, so the units, SRM, metrics on events and on fact tables read them as they read
 * those Verdict logs. The source gives each unit's first exposure (assignment-sources/
 * first-exposures.ts); a unit whose first exposure moved (another variant or time) or left the
 * source is superseded, as a forced re-bucket supersedes, and a new or moved unit gets a new live
 * exposure. Units in a variant the experiment does not have are left out. Metrics on fact tables
 * then ship these live exposures to their source like any experiment's: the incremental refresh
 * (incremental.ts) needs each unit's exposure time in Verdict to know which units to read in full.
 */
import type { Tx } from '../../../db/database.js';
import { problems } from '../../../http/problems.js';
import { newId } from '../../../lib/ids.js';
import { firstExposuresStatement, openAssignmentSource } from '../../assignment-sources/read.js';
import { SourceError, withSource, type FactReaderDeps } from '../../data-sources/read.js';
import type { ExperimentRow } from '../../experiments/read.js';
import { parseVariants } from '../../experiments/read.js';
import type { AnalysisDeps } from '../deps.js';
import type { ShippedExposure } from './spec.js';

type SyncDeps = FactReaderDeps & Pick<AnalysisDeps, 'clock'>;
export type AssignedRow = Pick<ExperimentRow, 'id' | 'workspace_id' | 'key' | 'variants' | 'assignment_source_id' | 'assignment_experiment_key'>;

/** Units per insert statement: far below every engine's parameter limit (9 columns a row). */
const INSERT_ROWS = 500;

/** What changed in the experiment's live exposures. */
export interface ExposureSync {
  /** Units whose first exposure the source gives (in a variant of the experiment). */
  units: number;
  added: number;
  superseded: number;
}

async function opened(ctx: FactReaderDeps, row: AssignedRow, sourceId: string) {
  const source = await openAssignmentSource(ctx, ctx.db, row.workspace_id, sourceId);
  if (!source) throw problems.metricNotComputable(`the experiment reads its exposures from assignment source ${sourceId}, which is gone`);
  const variants = parseVariants(row.variants).map((variant) => variant.key);
  return { source, ...firstExposuresStatement(source.kind, source.query, row.assignment_experiment_key ?? row.key, variants) };
}

async function readFirstExposures(ctx: SyncDeps, row: AssignedRow, sourceId: string): Promise<ShippedExposure[]> {
  const { source, sql, params } = await opened(ctx, row, sourceId);
  try {
    const rows = await withSource(source.kind, source.url, source.limits, (session) =>
      session.rows<{ unit_id: unknown; variant_key: unknown; exposed_at: unknown }>(sql, params),
    );
    return rows.map((item) => ({ unit_id: String(item.unit_id), variant_key: String(item.variant_key), exposed_at: Number(item.exposed_at) }));
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    if (error.reason === 'timeout') throw problems.dataSourceTimeout(error.message);
    throw problems.dataSourceUnreachable(`the assignment source "${source.name}" could not give the experiment’s exposures: ${error.message}`);
  }
}

async function liveRows(trx: Tx, row: AssignedRow) {
  return trx
    .selectFrom('exposures')
    .select(['id', 'unit_id', 'variant_key', 'exposed_at'])
    .where('workspace_id', '=', row.workspace_id)
    .where('experiment_id', '=', row.id)
    .where('superseded_at', 'is', null)
    .execute();
}

/** Brings the experiment's live exposures in line with its assignment source; nothing for an experiment Verdict assigns. */
export async function syncAssignedExposures(ctx: SyncDeps, row: AssignedRow): Promise<ExposureSync | null> {
  if (!row.assignment_source_id) return null;
  const wanted = new Map<string, ShippedExposure>();
  for (const exposure of await readFirstExposures(ctx, row, row.assignment_source_id))
    if (Number.isFinite(exposure.exposed_at)) wanted.set(exposure.unit_id, exposure);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const stale: string[] = [];
    const kept = new Set<string>();
    for (const live of await liveRows(trx, row)) {
      const want = wanted.get(live.unit_id);
      if (want && want.variant_key === live.variant_key && want.exposed_at === Number(live.exposed_at)) kept.add(live.unit_id);
      else stale.push(live.id);
    }
    for (let at = 0; at < stale.length; at += INSERT_ROWS)
      await trx
        .updateTable('exposures')
        .set({ superseded_at: now })
        .where('experiment_id', '=', row.id)
        .where('id', 'in', stale.slice(at, at + INSERT_ROWS))
        .execute();
    const added = [...wanted.values()].filter((exposure) => !kept.has(exposure.unit_id));
    for (let at = 0; at < added.length; at += INSERT_ROWS) {
      const values = added.slice(at, at + INSERT_ROWS).map((exposure) => ({
        id: newId(),
        workspace_id: row.workspace_id,
        experiment_id: row.id,
        unit_id: exposure.unit_id,
        variant_key: exposure.variant_key,
        exposed_at: exposure.exposed_at,
        superseded_at: null,
        source: 'warehouse' as const,
        source_key_id: null,
      }));
      await trx.insertInto('exposures').values(values).execute();
    }
    return { units: wanted.size, added: added.length, superseded: stale.length };
  });
}
