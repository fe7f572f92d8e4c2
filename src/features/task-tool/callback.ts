import { parseJsonBytes } from '../../http/json-body.js';
import { problems } from '../../http/problems.js';
import { toFieldErrors, validatorCompiler } from '../../http/validation.js';
import { ULID_PATTERN } from '../../lib/ids.js';
import { verifyTaskToolSignature, type HeaderValue, type TaskToolSignatureResult } from '../inbound/signature.js';
import type { TaskToolDeps } from './deps.js';
import { TaskToolCallbackBody } from './schemas.js';
import { workspaceWebhookSecrets } from './service.js';

/** The durable job the spec calls MirrorTaskStatusJob. */
export const MIRROR_TASK_STATUS_JOB = 'webhooks.mirror_task_status';

/** The events the tool is subscribed to on connect; others are acknowledged and ignored. */
export const MIRRORED_EVENTS = ['taskStatusUpdated', 'taskUpdated', 'taskDeleted'] as const;
export type MirroredEvent = (typeof MIRRORED_EVENTS)[number];

/** One status change of the task, from a history item whose `field` is `status`. */
export interface StatusChange {
  history_item_id: string;
  before_status: string | null;
  after_status: string;
  /** The item's `date` (epoch ms), null when absent or unreadable. */
  date: number | null;
}

/** The job payload: the parsed callback, reduced to what the mirror needs. */
export interface MirrorTaskStatusPayload {
  workspace_id: string;
  event: MirroredEvent;
  task_id: string;
  webhook_id: string | null;
  received_at: number;
  status_changes: StatusChange[];
}

export interface TaskToolCallbackRequest {
  workspaceId: string;
  signature: HeaderValue;
  rawBody: Buffer;
}

const SIGNATURE_PROBLEMS = {
  missing: 'the X-Signature header is missing; send the hex HMAC-SHA256 of the raw body keyed with the workspace webhook secret',
  malformed: 'the X-Signature header is malformed; expected 64 hex digits',
  mismatch: 'X-Signature does not match the body for the workspace webhook secret (or its previous one within 24 hours of a rotation)',
} as const;

const validateCallback = validatorCompiler({ schema: TaskToolCallbackBody, httpPart: 'body', method: 'POST', url: '/webhooks/task-tool' }) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toFieldErrors>[0] | null;
};

type Callback = { event: string; task_id: string; webhook_id?: string; history_items?: Array<Record<string, unknown>> };

function parseCallback(rawBody: Buffer): Callback {
  const parsed = parseJsonBytes(rawBody);
  if (!validateCallback(parsed)) throw problems.validation(toFieldErrors(validateCallback.errors ?? [], 'body'));
  return parsed as Callback;
}

function statusOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const status = (value as { status?: unknown }).status;
  return typeof status === 'string' ? status : null;
}

/** Status items in the order sent; other fields (content, custom fields) are not mirrored. */
export function statusChangesOf(items: ReadonlyArray<Record<string, unknown>>): StatusChange[] {
  const changes: StatusChange[] = [];
  for (const item of items) {
    const after = statusOf(item.after);
    if (item.field !== 'status' || after === null) continue;
    const date = Number(item.date);
    changes.push({
      history_item_id: String(item.id),
      before_status: statusOf(item.before),
      after_status: after,
      date: typeof item.date === 'string' && item.date !== '' && Number.isFinite(date) ? date : null,
    });
  }
  return changes;
}

async function checkSignature(ctx: TaskToolDeps, request: TaskToolCallbackRequest, now: number): Promise<void> {
  const secrets = ULID_PATTERN.test(request.workspaceId) ? await workspaceWebhookSecrets(ctx, request.workspaceId, now) : undefined;
  if (!secrets) throw problems.notFound(`no workspace ${request.workspaceId}`);
  const verdicts: TaskToolSignatureResult[] = secrets.map((secret) => verifyTaskToolSignature(request.signature, request.rawBody, secret));
  const refusal = verdicts.every((verdict) => !verdict.ok) ? verdicts[0] : undefined;
  if (refusal && !refusal.ok) throw problems.invalidSignature(SIGNATURE_PROBLEMS[refusal.reason]);
}

/**
 * POST /webhooks/task-tool/{workspace_id}: verify X-Signature over the raw bytes (401), read the
 * ClickUp-shaped body (400/422), and durably enqueue the MirrorTaskStatusJob. Event types the
 * tool was not subscribed to are acknowledged and ignored, so the tool does not retry them.
 */
export async function receiveTaskToolCallback(ctx: TaskToolDeps, request: TaskToolCallbackRequest): Promise<{ received: true; ignored?: true }> {
  const now = ctx.clock.now();
  await checkSignature(ctx, request, now);
  const callback = parseCallback(request.rawBody);
  if (!(MIRRORED_EVENTS as readonly string[]).includes(callback.event)) {
    ctx.logger.info({ workspace_id: request.workspaceId, event: callback.event }, 'ignored a task-tool callback of an unmirrored event');
    return { received: true, ignored: true };
  }
  const payload: MirrorTaskStatusPayload = {
    workspace_id: request.workspaceId,
    event: callback.event as MirroredEvent,
    task_id: callback.task_id,
    webhook_id: callback.webhook_id ?? null,
    received_at: now,
    status_changes: statusChangesOf(callback.history_items ?? []),
  };
  // A single insert: committed, and so durable, when it returns.
  await ctx.enqueue(ctx.db, { name: MIRROR_TASK_STATUS_JOB, payload, workspaceId: request.workspaceId });
  return { received: true };
}
