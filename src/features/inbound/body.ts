import { parseJsonBytes } from '../../http/json-body.js';
import { problems } from '../../http/problems.js';
import { toFieldErrors, validatorCompiler } from '../../http/validation.js';
import { EventBatchEnvelope } from '../events/schemas.js';
import { describeRejection, validateEvent } from '../events/validate.js';

/** What an inbound body carries: the events to ingest, and whether it was a single event. */
export interface InboundEvents {
  events: unknown[];
  single: boolean;
}

const validateEnvelope = validatorCompiler({ schema: EventBatchEnvelope, httpPart: 'body', method: 'POST', url: '/webhooks/inbound' }) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toFieldErrors>[0] | null;
};

function parseJson(rawBody: Buffer): unknown {
  if (rawBody.length === 0) throw problems.malformedRequest('the body is empty; send one event or {"events": [...]} as JSON');
  return parseJsonBytes(rawBody);
}

/**
 * Reads an inbound body: one EventInput, or `{events: [EventInput]}` with 1 to 500 events.
 * Anything else is refused before any ingest (400 not JSON, 422 wrong shape). A single event
 * is checked here as POST /v1/events checks it (422, or 412 when too old is its only fault);
 * in an envelope each event is checked by the pipeline and a bad one is listed as rejected.
 */
export function parseInboundBody(rawBody: Buffer, workspaceId: string, receivedAt: number): InboundEvents {
  const parsed = parseJson(rawBody);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw problems.validation([{ pointer: '', message: 'must be one event object or an object {"events": [...]}' }]);
  }
  if (Object.prototype.hasOwnProperty.call(parsed, 'events')) {
    if (!validateEnvelope(parsed)) throw problems.validation(toFieldErrors(validateEnvelope.errors ?? [], 'body'));
    return { events: (parsed as { events: unknown[] }).events, single: false };
  }
  const checked = validateEvent(parsed, workspaceId, receivedAt);
  if (!checked.ok) {
    if (checked.tooOld) throw problems.preconditionFailed(describeRejection(checked.errors), checked.errors);
    throw problems.validation(checked.errors);
  }
  return { events: [parsed], single: true };
}
