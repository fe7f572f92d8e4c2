import type { BufferedEvent } from '../../buffer/types.js';
import type { FieldError } from '../../http/problems.js';
import { toFieldErrors, validatorCompiler } from '../../http/validation.js';
import { newId } from '../../lib/ids.js';
import { EventInput } from './schemas.js';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

export const EVENT_LIMITS = {
  /** Serialized properties, in UTF-8 bytes. */
  propertiesMaxBytes: 16 * 1024,
  /** The properties object is depth 1; each nested object or array adds one. */
  propertiesMaxDepth: 8,
  /** From this age on an event is late (still counted, and reported as late). */
  lateAfterMs: 7 * DAY_MS,
  /** Older than this an event is refused (412). */
  maxAgeMs: 30 * DAY_MS,
  /** Allowed clock skew of the sender. */
  maxFutureMs: 5 * MINUTE_MS,
} as const;

export type EventCheck =
  | { ok: true; event: BufferedEvent }
  /** `tooOld` marks the one refusal the API answers with 412 instead of 422. */
  | { ok: false; tooOld: boolean; errors: FieldError[] };

/** True when objects or arrays nest deeper than `limit`; stops looking as soon as they do. */
function nestsDeeperThan(value: unknown, limit: number, depth = 1): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > limit) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (nestsDeeperThan(child, limit, depth + 1)) return true;
  }
  return false;
}

function checkProperties(properties: EventInput['properties'], errors: FieldError[]): string {
  if (properties === undefined) return '{}';
  if (nestsDeeperThan(properties, EVENT_LIMITS.propertiesMaxDepth)) {
    errors.push({ pointer: '/properties', message: `must not nest deeper than ${EVENT_LIMITS.propertiesMaxDepth} levels` });
    return '';
  }
  const json = JSON.stringify(properties);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > EVENT_LIMITS.propertiesMaxBytes) {
    errors.push({ pointer: '/properties', message: `must be at most ${EVENT_LIMITS.propertiesMaxBytes} bytes of JSON, got ${bytes}` });
  }
  return json;
}

/** Returns when the event occurred, or null after recording why the time is refused. */
function checkOccurredAt(occurredAt: string | undefined, receivedAt: number, errors: FieldError[]): { at: number; tooOld: boolean } | null {
  if (occurredAt === undefined) return { at: receivedAt, tooOld: false };
  const at = Date.parse(occurredAt);
  if (Number.isNaN(at)) {
    errors.push({ pointer: '/occurred_at', message: 'must be a valid date-time' });
    return null;
  }
  if (at - receivedAt > EVENT_LIMITS.maxFutureMs) {
    errors.push({ pointer: '/occurred_at', message: 'must not be more than 5 minutes in the future' });
    return null;
  }
  if (receivedAt - at > EVENT_LIMITS.maxAgeMs) {
    errors.push({ pointer: '/occurred_at', message: 'is more than 30 days old; such events are no longer accepted' });
    return { at, tooOld: true };
  }
  return { at, tooOld: false };
}

/**
 * The rules beyond the schema (properties size and depth, the time window), for an input the
 * schema already accepted. A valid event comes back in its stored shape with its id.
 */
export function checkEvent(input: EventInput, workspaceId: string, receivedAt: number): EventCheck {
  const errors: FieldError[] = [];
  const properties = checkProperties(input.properties, errors);
  const occurred = checkOccurredAt(input.occurred_at, receivedAt, errors);
  if (errors.length > 0 || !occurred) {
    // Age is answered with 412 only when it is the sole problem; anything else is a plain 422.
    const tooOld = occurred?.tooOld === true && errors.length === 1;
    return { ok: false, tooOld, errors };
  }
  return {
    ok: true,
    event: {
      id: newId(),
      workspace_id: workspaceId,
      unit_id: input.unit_id,
      event_key: input.event_key,
      properties,
      occurred_at: occurred.at,
      received_at: receivedAt,
      late: receivedAt - occurred.at >= EVENT_LIMITS.lateAfterMs ? 1 : 0,
      client_event_id: input.client_event_id ?? null,
    },
  };
}

// The same compiled schema the single-event route validates with, for events that arrive in a
// batch or from another slice.
const validateInput = validatorCompiler({ schema: EventInput, httpPart: 'body', method: 'POST', url: '/v1/events' }) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toFieldErrors>[0] | null;
};

/** Schema and rules for an event of unknown shape. */
export function validateEvent(raw: unknown, workspaceId: string, receivedAt: number): EventCheck {
  if (!validateInput(raw)) return { ok: false, tooOld: false, errors: toFieldErrors(validateInput.errors ?? [], 'body') };
  return checkEvent(raw as EventInput, workspaceId, receivedAt);
}

/** One line naming every problem of an event, with pointers from the request root. */
export function describeRejection(errors: FieldError[], pointerPrefix = ''): string {
  return errors.map((error) => `${pointerPrefix}${error.pointer ?? ''}: ${error.message}`).join('; ');
}
