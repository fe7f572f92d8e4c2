import type { Problem } from './generated/api.js';
import type { TrackedEvent } from './types.js';

/**
 * What went wrong:
 * - `http`: the server answered with an error status that retrying cannot fix (the problem
 *   body is in `problem`);
 * - `network`: no answer (connection refused or cut, DNS, CORS);
 * - `rejected`: the server accepted a batch but refused some of its events (`rejected`);
 * - `dropped`: the event queue was full, so the oldest events were dropped;
 * - `abandoned`: `close()` timed out with events still unsent.
 */
export type VerdictErrorKind = 'http' | 'network' | 'rejected' | 'dropped' | 'abandoned';

export interface RejectedEvent {
  event: TrackedEvent;
  reason: string;
}

export interface VerdictErrorDetails {
  status?: number;
  problem?: Problem;
  /** Events the error is about (not delivered), for `http`, `rejected` and `abandoned`. */
  events?: TrackedEvent[];
  rejected?: RejectedEvent[];
  /** How many events, for `dropped` and `abandoned`. */
  count?: number;
  cause?: unknown;
}

export class VerdictError extends Error {
  override readonly name = 'VerdictError';
  readonly kind: VerdictErrorKind;
  readonly status: number | undefined;
  readonly problem: Problem | undefined;
  readonly events: TrackedEvent[];
  readonly rejected: RejectedEvent[];
  readonly count: number;

  constructor(kind: VerdictErrorKind, message: string, details: VerdictErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.status = details.status;
    this.problem = details.problem;
    this.events = details.events ?? [];
    this.rejected = details.rejected ?? [];
    this.count = details.count ?? this.events.length;
  }
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).title === 'string';
}

/** An `http` error from a response, with the problem's title and detail in the message. */
export function httpError(what: string, status: number, body: unknown, events?: TrackedEvent[]): VerdictError {
  const problem = isProblem(body) ? body : undefined;
  const explanation = problem ? `: ${problem.detail ?? problem.title}` : '';
  return new VerdictError('http', `${what} failed with HTTP ${status}${explanation}`, {
    status,
    ...(problem ? { problem } : {}),
    ...(events ? { events } : {}),
  });
}
