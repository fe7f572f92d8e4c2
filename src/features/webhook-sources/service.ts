import { uniqueViolationAs } from '../../db/dialect.js';
import { problems, type Problem } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { rotatedColumns, workingSecrets } from '../../lib/rotating-secret.js';
import { toIso } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { newWebhookSecret } from '../workspaces/webhook-secret.js';
import type { WebhookSourcesDeps } from './deps.js';
import type { WebhookSourceInput, WebhookSourcePatch } from './schemas.js';
import { findWebhookSource, insertWebhookSource, lockWebhookSource, toWebhookSource, updateWebhookSource, type WebhookSourceRow } from './store.js';

function slugTaken(slug: string): Problem {
  return problems.keyTaken(`a webhook source with slug "${slug}" already exists in this workspace`);
}

function notFound(id: string): Problem {
  return problems.notFound(`no webhook source with id ${id}`);
}

/** Every secret that verifies right now: the current one, and the previous one inside its grace period. */
export function verifyingSecrets(ctx: Pick<WebhookSourcesDeps, 'secrets'>, row: WebhookSourceRow, now: number): string[] {
  return workingSecrets(ctx.secrets, row, now);
}

export async function createWebhookSource(ctx: WebhookSourcesDeps, workspaceId: string, actorId: string, input: WebhookSourceInput) {
  const secret = newWebhookSecret();
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const now = ctx.clock.now();
        const row: WebhookSourceRow = {
          id: newId(),
          workspace_id: workspaceId,
          slug: input.slug,
          name: input.name,
          enabled: input.enabled === false ? 0 : 1,
          secret_enc: ctx.secrets.seal(secret),
          previous_secret_enc: null,
          previous_secret_expires_at: null,
          created_at: now,
          updated_at: now,
        };
        await insertWebhookSource(trx, row);
        const payload = { slug: row.slug, name: row.name, enabled: row.enabled === 1 };
        await recordAudit(trx, { workspaceId, actorId, action: 'webhook_source.created', targetType: 'webhook_source', targetId: row.id, payload, at: now });
        return { ...toWebhookSource(row, now), inbound_secret: secret };
      }),
    () => slugTaken(input.slug),
  );
}

export async function getWebhookSource(ctx: WebhookSourcesDeps, workspaceId: string, id: string) {
  const row = await findWebhookSource(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  return toWebhookSource(row, ctx.clock.now());
}

type FieldChange = { from: unknown; to: unknown };

function changesOf(current: WebhookSourceRow, patch: WebhookSourcePatch): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  if (patch.slug !== undefined && patch.slug !== current.slug) changes.slug = { from: current.slug, to: patch.slug };
  if (patch.name !== undefined && patch.name !== current.name) changes.name = { from: current.name, to: patch.name };
  const enabled = current.enabled === 1;
  if (patch.enabled !== undefined && patch.enabled !== enabled) changes.enabled = { from: enabled, to: patch.enabled };
  return changes;
}

/** Changes slug, name or enabled; an unchanged body changes nothing and logs nothing. */
export async function patchWebhookSource(ctx: WebhookSourcesDeps, workspaceId: string, actorId: string, id: string, patch: WebhookSourcePatch) {
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const current = await lockWebhookSource(trx, ctx.seam, workspaceId, id);
        if (!current) throw notFound(id);
        const now = ctx.clock.now();
        const changes = changesOf(current, patch);
        if (Object.keys(changes).length === 0) return toWebhookSource(current, now);
        const updated: WebhookSourceRow = {
          ...current,
          slug: patch.slug ?? current.slug,
          name: patch.name ?? current.name,
          enabled: patch.enabled === undefined ? current.enabled : patch.enabled ? 1 : 0,
          updated_at: now,
        };
        await updateWebhookSource(trx, workspaceId, id, { slug: updated.slug, name: updated.name, enabled: updated.enabled, updated_at: now });
        await recordAudit(trx, {
          workspaceId,
          actorId,
          action: 'webhook_source.updated',
          targetType: 'webhook_source',
          targetId: id,
          payload: { changes },
          at: now,
        });
        return toWebhookSource(updated, now);
      }),
    () => slugTaken(patch.slug ?? ''),
  );
}

/**
 * Issues a new inbound secret. The replaced one keeps verifying for 24 hours; a second rotation
 * inside that window retires the oldest secret at once (only two secrets verify at any time).
 * The audit entry records the rotation, never a secret.
 */
export async function rotateWebhookSourceSecret(ctx: WebhookSourcesDeps, workspaceId: string, actorId: string, id: string) {
  const secret = newWebhookSecret();
  return ctx.db.transaction().execute(async (trx) => {
    const current = await lockWebhookSource(trx, ctx.seam, workspaceId, id);
    if (!current) throw notFound(id);
    const now = ctx.clock.now();
    const changes = { ...rotatedColumns(ctx.secrets, current, secret, now), updated_at: now };
    await updateWebhookSource(trx, workspaceId, id, changes);
    const updated: WebhookSourceRow = { ...current, ...changes };
    const payload = { slug: current.slug, previous_secret_expires_at: toIso(changes.previous_secret_expires_at) };
    await recordAudit(trx, { workspaceId, actorId, action: 'webhook_source.secret_rotated', targetType: 'webhook_source', targetId: id, payload, at: now });
    return { ...toWebhookSource(updated, now), inbound_secret: secret };
  });
}
