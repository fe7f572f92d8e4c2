import { BufferFullError, BufferUnavailableError, type AppendOutcome, type BufferedEvent, type BufferStatus } from '../../buffer/types.js';
import { problems } from '../../http/problems.js';
import type { EventsDeps } from './deps.js';
import type { EventBatchAck, EventInput } from './schemas.js';
import { checkEvent, describeRejection, validateEvent } from './validate.js';

/** What became of one event handed to the pipeline. */
export type IngestOutcome = { status: 'accepted' } | { status: 'replay' } | { status: 'rejected'; reason: string };

/** Seconds a client should wait before retrying a 429 or 503: the buffer drains or reconnects within about that. */
const RETRY_AFTER_SECONDS = 1;

/** The API's answer to a buffer failure: 429 when full, 503 when unreachable; anything else is a bug. */
function asProblem(ctx: EventsDeps, error: unknown): unknown {
  if (error instanceof BufferFullError) {
    return problems.tooManyRequests(
      `${error.pending} events are waiting to be stored, above the limit of ${error.maxPending}; retry shortly`,
      RETRY_AFTER_SECONDS,
    );
  }
  if (error instanceof BufferUnavailableError) {
    ctx.logger.warn({ err: error }, 'event buffer unavailable');
    return problems.unavailable('the event buffer cannot be reached; nothing was stored, retry shortly', RETRY_AFTER_SECONDS);
  }
  return error;
}

async function appendToBuffer(ctx: EventsDeps, events: BufferedEvent[]): Promise<AppendOutcome[]> {
  try {
    const outcomes = await ctx.buffer.append(events);
    let accepted = 0;
    for (const outcome of outcomes) if (outcome === 'accepted') accepted += 1;
    if (accepted > 0) ctx.metrics.eventsBuffered.inc(accepted);
    return outcomes;
  } catch (error) {
    throw asProblem(ctx, error);
  }
}

/** GET /v1/events/buffer. */
export async function bufferStatus(ctx: EventsDeps): Promise<BufferStatus> {
  try {
    return await ctx.buffer.status();
  } catch (error) {
    throw asProblem(ctx, error);
  }
}

/** POST /v1/events: the body passed the schema; the remaining rules answer 422 or 412. */
export async function trackEvent(ctx: EventsDeps, workspaceId: string, input: EventInput): Promise<{ accepted: true; idempotent_replay: boolean }> {
  const checked = checkEvent(input, workspaceId, ctx.clock.now());
  if (!checked.ok) {
    if (checked.tooOld) throw problems.preconditionFailed(describeRejection(checked.errors), checked.errors);
    throw problems.validation(checked.errors);
  }
  const [outcome] = await appendToBuffer(ctx, [checked.event]);
  return { accepted: true, idempotent_replay: outcome === 'replay' };
}

/**
 * Validates and ingests events into the same pipeline as POST /v1/events: buffered durably,
 * de-duplicated on client_event_id, persisted by the drainer. For other slices (inbound
 * webhooks); throws the 429/503 problems when the buffer is full or unreachable.
 */
export async function ingestEvents(ctx: EventsDeps, workspaceId: string, inputs: readonly unknown[]): Promise<IngestOutcome[]> {
  const receivedAt = ctx.clock.now();
  const outcomes: IngestOutcome[] = new Array(inputs.length);
  const valid: BufferedEvent[] = [];
  const validIndex: number[] = [];
  inputs.forEach((raw, index) => {
    const checked = validateEvent(raw, workspaceId, receivedAt);
    if (checked.ok) {
      valid.push(checked.event);
      validIndex.push(index);
    } else {
      outcomes[index] = { status: 'rejected', reason: describeRejection(checked.errors, `/events/${index}`) };
    }
  });
  const appended = valid.length > 0 ? await appendToBuffer(ctx, valid) : [];
  appended.forEach((outcome, position) => {
    outcomes[validIndex[position] as number] = { status: outcome === 'replay' ? 'replay' : 'accepted' };
  });
  return outcomes;
}

/** POST /v1/events/batch. */
export async function trackBatch(ctx: EventsDeps, workspaceId: string, inputs: readonly unknown[]): Promise<EventBatchAck> {
  const outcomes = await ingestEvents(ctx, workspaceId, inputs);
  const ack: EventBatchAck = { accepted_count: 0, idempotent_replay_count: 0, rejected: [] };
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'rejected') ack.rejected.push({ index, reason: outcome.reason });
    else ack.accepted_count += 1;
    if (outcome.status === 'replay') ack.idempotent_replay_count += 1;
  });
  return ack;
}
