import type { AssignResponse, TrackEventBatchRequest } from './generated/api.js';

/** One event as the SDK sends it: always with the `client_event_id` that makes a retry harmless. */
export type TrackedEvent = TrackEventBatchRequest['events'][number] & { client_event_id: string };

/** An assignment, exactly as `POST /v1/assign` returns it. */
export type Assignment = AssignResponse;

/** Counters since the client was created. */
export interface ClientStats {
  /** Events passed to `track()`. */
  tracked: number;
  /** Events the server acknowledged (202), idempotent replays included. */
  sent: number;
  /** Events the server refused in a 202 (`rejected[]`) or with a non-retryable error status. */
  rejected: number;
  /** Oldest events dropped because the queue was full. */
  dropped: number;
  /** Events given up when `close()` timed out. */
  abandoned: number;
  /** Requests repeated after a network error, a 5xx or a 429. */
  retries: number;
  /** Events waiting to be sent, and events in requests not yet answered. */
  queued: number;
  inFlight: number;
}
