import { problems, problemForStatus } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { findExperiment, type ExperimentRow } from '../experiments/read.js';
import { linkToken, tokenHash } from '../people/links.js';
import type { SharingDeps } from './deps.js';
import { findShareLink, findShareLinkByTokenHash, insertShareLink, listShareLinks, revokeShareLink, type ShareLinkRow } from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

function toView(row: ShareLinkRow, now: number) {
  const status = row.revoked_at !== null ? 'revoked' : row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    experiment_id: row.experiment_id,
    status,
    created_at: toIso(row.created_at),
    expires_at: toIso(row.expires_at),
    revoked_at: row.revoked_at === null ? null : toIso(row.revoked_at),
  } as const;
}

async function experimentOf(ctx: SharingDeps, workspaceId: string, id: string): Promise<ExperimentRow> {
  const experiment = await findExperiment(ctx.db, workspaceId, id);
  if (!experiment) throw problems.notFound(`experiment ${id} does not exist in this workspace`);
  return experiment;
}

/**
 * POST /v1/experiments/{id}/share-links. The token is 256 random bits (the URL's last segment);
 * only its SHA-256 is stored, so the URL is shown once and a copy of the database opens nothing.
 */
export async function createShareLink(ctx: SharingDeps, workspaceId: string, actorId: string, experimentId: string, days: number, base: string) {
  const experiment = await experimentOf(ctx, workspaceId, experimentId);
  const token = linkToken('shr');
  const now = ctx.clock.now();
  const row: ShareLinkRow = {
    id: newId(),
    workspace_id: workspaceId,
    experiment_id: experiment.id,
    token_hash: tokenHash(token),
    created_by: actorId,
    created_at: now,
    expires_at: now + days * DAY_MS,
    revoked_at: null,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertShareLink(trx, row);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'share_link.created',
      targetType: 'experiment',
      targetId: experiment.id,
      payload: { share_link_id: row.id, expires_at: toIso(row.expires_at) },
      at: now,
    });
  });
  return { ...toView(row, now), url: `${base}/v1/shared/${token}` };
}

export async function listExperimentShareLinks(ctx: SharingDeps, workspaceId: string, experimentId: string) {
  const experiment = await experimentOf(ctx, workspaceId, experimentId);
  const now = ctx.clock.now();
  return { data: (await listShareLinks(ctx.db, workspaceId, experiment.id)).map((row) => toView(row, now)) };
}

/** DELETE /v1/share-links/{id}: the link stops working at once; revoking twice changes nothing. */
export async function revokeLink(ctx: SharingDeps, workspaceId: string, actorId: string, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const link = await findShareLink(trx, workspaceId, id);
    if (!link) throw problems.notFound(`share link ${id} does not exist in this workspace`);
    const now = ctx.clock.now();
    if (!(await revokeShareLink(trx, id, now))) return;
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'share_link.revoked',
      targetType: 'experiment',
      targetId: link.experiment_id,
      payload: { share_link_id: id },
      at: now,
    });
  });
}

/**
 * GET /v1/shared/{token}: the link's experiment and its latest results, nothing else. Each view is
 * audited (no actor: whoever holds the link). Unknown: 404; revoked or expired: 410.
 */
export async function viewShared(ctx: SharingDeps, token: string) {
  const link = await findShareLinkByTokenHash(ctx.db, tokenHash(token));
  if (!link) throw problems.notFound('this share link does not exist');
  const now = ctx.clock.now();
  if (link.revoked_at !== null) throw problemForStatus(410, 'this share link was revoked');
  if (link.expires_at <= now) throw problemForStatus(410, 'this share link has expired');
  const experiment = await experimentOf(ctx, link.workspace_id, link.experiment_id);
  const results = await ctx.results.latest(link.workspace_id, experiment.id);
  await recordAudit(ctx.db, {
    workspaceId: link.workspace_id,
    actorId: null,
    action: 'share_link.viewed',
    targetType: 'experiment',
    targetId: experiment.id,
    payload: { share_link_id: link.id, snapshot_id: results.id },
    at: now,
  });
  return {
    experiment: { id: experiment.id, key: experiment.key, name: experiment.name, hypothesis: experiment.hypothesis, status: experiment.status },
    results,
    expires_at: toIso(link.expires_at),
  };
}
