import type { FieldError } from '../../http/problems.js';
import { problems } from '../../http/problems.js';
import { previousSecretExpiry, rotatedColumns, workingSecrets } from '../../lib/rotating-secret.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { findWorkspaceSecret, lockWorkspaceSecret, newWebhookSecret, replaceWorkspaceSecret } from '../workspaces/webhook-secret.js';
import type { TaskToolDeps } from './deps.js';
import type { TaskToolSettingsInput } from './schemas.js';
import { findSettings, parseMapping, saveMapping, savePreviousSecret, type StatusMapping, type TaskToolSettingsRow } from './store.js';

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function toSettings(row: TaskToolSettingsRow | undefined, now: number) {
  return {
    status_mapping: row ? parseMapping(row.status_mapping) : {},
    previous_secret_expires_at: row ? previousSecretExpiry(row, now) : null,
    updated_at: toIsoOrNull(row?.updated_at),
  };
}

/** Looks a task-tool status up in the mapping, ignoring case and surrounding spaces. */
export function mapStatus(mapping: StatusMapping, toolStatus: string): string | undefined {
  const wanted = toolStatus.trim().toLowerCase();
  for (const [name, leadStatus] of Object.entries(mapping)) {
    if (name.trim().toLowerCase() === wanted) return leadStatus;
  }
  return undefined;
}

/** Names that differ only in case would make the case-insensitive lookup ambiguous. */
function ambiguousNames(mapping: StatusMapping): FieldError[] {
  const seen = new Map<string, string>();
  const errors: FieldError[] = [];
  for (const name of Object.keys(mapping)) {
    const folded = name.trim().toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined) {
      errors.push({ pointer: `/status_mapping/${escapePointer(name)}`, message: `matches "${earlier}" when case is ignored; keep one of them` });
    } else if (folded === '') {
      errors.push({ pointer: `/status_mapping/${escapePointer(name)}`, message: 'must not be blank' });
    } else {
      seen.set(folded, name);
    }
  }
  return errors;
}

export async function getTaskToolSettings(ctx: TaskToolDeps, workspaceId: string) {
  return toSettings(await findSettings(ctx.db, workspaceId), ctx.clock.now());
}

/** Replaces the whole mapping (PUT semantics) and audits the old and new mapping. */
export async function putTaskToolSettings(ctx: TaskToolDeps, workspaceId: string, actorId: string, input: TaskToolSettingsInput) {
  const errors = ambiguousNames(input.status_mapping);
  if (errors.length > 0) throw problems.validation(errors);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const before = await findSettings(trx, workspaceId);
    await saveMapping(trx, workspaceId, input.status_mapping, now);
    const payload = { from: before ? parseMapping(before.status_mapping) : {}, to: input.status_mapping };
    await recordAudit(trx, { workspaceId, actorId, action: 'task_tool.settings_updated', targetType: 'workspace', targetId: workspaceId, payload, at: now });
    return toSettings(await findSettings(trx, workspaceId), now);
  });
}

/**
 * Issues a new workspace webhook secret (returned once). The replaced one keeps verifying task-tool
 * callbacks for 24 hours, so the tool can be reconfigured without dropping callbacks.
 */
export async function rotateWorkspaceWebhookSecret(ctx: TaskToolDeps, workspaceId: string, actorId: string) {
  const secret = newWebhookSecret();
  return ctx.db.transaction().execute(async (trx) => {
    const current = await lockWorkspaceSecret(trx, ctx.seam, workspaceId);
    if (current === undefined) throw problems.notFound('the workspace of this key no longer exists');
    const now = ctx.clock.now();
    const rotated = rotatedColumns(ctx.secrets, { secret_enc: current }, secret, now);
    const expiresAt = rotated.previous_secret_expires_at;
    await replaceWorkspaceSecret(trx, workspaceId, rotated.secret_enc);
    await savePreviousSecret(trx, workspaceId, rotated.previous_secret_enc, expiresAt, now);
    const payload = { previous_secret_expires_at: toIso(expiresAt) };
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'workspace.webhook_secret_rotated',
      targetType: 'workspace',
      targetId: workspaceId,
      payload,
      at: now,
    });
    return { webhook_secret: secret, previous_secret_expires_at: toIso(expiresAt) };
  });
}

/** The workspace webhook secrets that verify now, current first; undefined for an unknown workspace. */
export async function workspaceWebhookSecrets(ctx: TaskToolDeps, workspaceId: string, now: number): Promise<string[] | undefined> {
  const sealed = await findWorkspaceSecret(ctx.db, workspaceId);
  if (sealed === undefined) return undefined;
  const settings = await findSettings(ctx.db, workspaceId);
  const previous = { previous_secret_enc: settings?.previous_secret_enc ?? null, previous_secret_expires_at: settings?.previous_secret_expires_at ?? null };
  return workingSecrets(ctx.secrets, { secret_enc: sealed, ...previous }, now);
}
