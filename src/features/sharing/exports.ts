import { recordAudit } from '../audit/recorder.js';
import { MAX_HISTORY_PAGE } from '../analysis/schemas.js';
import type { SharingDeps } from './deps.js';
import { csvHeader, snapshotRows } from './csv.js';
import { notebookExport } from './notebook.js';

/** An export is a read of results like a peek, so it is audited the same way, with its format. */
async function auditExport(ctx: SharingDeps, workspaceId: string, actorId: string, experimentId: string, what: string, snapshotId: string | null) {
  await recordAudit(ctx.db, {
    workspaceId,
    actorId,
    action: 'experiment.results_exported',
    targetType: 'experiment',
    targetId: experimentId,
    payload: { export: what, snapshot_id: snapshotId },
    at: ctx.clock.now(),
  });
}

/** GET /v1/experiments/{id}/results/export?format=csv: the latest snapshot, a row per metric and variant. */
export async function exportLatestCsv(ctx: SharingDeps, workspaceId: string, actorId: string, experimentId: string): Promise<string> {
  const snapshot = await ctx.results.latest(workspaceId, experimentId);
  await auditExport(ctx, workspaceId, actorId, snapshot.experiment_id, 'results.csv', snapshot.id);
  return csvHeader() + snapshotRows(snapshot);
}

/** GET /v1/experiments/{id}/results/export?format=notebook. */
export async function exportNotebook(ctx: SharingDeps, workspaceId: string, actorId: string, experimentId: string) {
  const snapshot = await ctx.results.latest(workspaceId, experimentId);
  await auditExport(ctx, workspaceId, actorId, snapshot.experiment_id, 'results.notebook', snapshot.id);
  return notebookExport(snapshot);
}

/** GET /v1/experiments/{id}/results/history/export?format=csv: every snapshot, oldest first. */
export async function exportHistoryCsv(ctx: SharingDeps, workspaceId: string, actorId: string, experimentId: string): Promise<string> {
  let out = csvHeader();
  let cursor: string | undefined;
  for (;;) {
    const page = await ctx.results.history(workspaceId, experimentId, { limit: MAX_HISTORY_PAGE, ...(cursor ? { cursor } : {}) });
    for (const snapshot of page.snapshots) out += snapshotRows(snapshot);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  await auditExport(ctx, workspaceId, actorId, experimentId, 'history.csv', null);
  return out;
}
