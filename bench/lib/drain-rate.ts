/**
 * The buffer's append and drain, called directly (no HTTP, no JSON parsing, no validation), as
 * bench/events-storage.ts and the ClickHouse comparison of bench/analysis.ts measure them: events
 * appended in batches of 500, several batches in flight so group commit sees concurrent requests,
 * then drained with the persistence the product's drainer uses.
 */
import { performance } from 'node:perf_hooks';
import type { BufferedEvent, PersistEvents } from '../../src/buffer/types.js';
import type { AppContext } from '../../src/context.js';
import { newId } from '../../src/lib/ids.js';

/** As in the HTTP benchmark: 500 events per request, unit ids user-0 .. user-499, a new client_event_id each. */
export const BATCH = 500;
export const UNITS = 500;
/** Batches in flight at once, so group commit sees concurrent requests as the server does. */
export const CONCURRENCY = 16;

/** A counter on one terminal line; nothing when the output is not a terminal (a file stays readable). */
export function progress(label: string, done: number, total: number): void {
  if (process.stdout.isTTY) process.stdout.write(`\r${label}: ${done.toLocaleString('en')} / ${total.toLocaleString('en')}`);
}

export function endProgress(): void {
  if (process.stdout.isTTY) process.stdout.write('\r\x1b[K');
}

export function batchOf(workspaceId: string, run: string, first: number): BufferedEvent[] {
  const now = Date.now();
  return Array.from({ length: BATCH }, (_, i) => ({
    id: newId(),
    workspace_id: workspaceId,
    unit_id: `user-${i % UNITS}`,
    event_key: 'purchase',
    properties: '{"amount":12.5,"currency":"EUR"}',
    occurred_at: now,
    received_at: now,
    late: 0 as const,
    client_event_id: `bench-${run}-${first + i}`,
  }));
}

/** Appends `total` events in batches of 500, CONCURRENCY at a time; returns events per second. */
export async function measureAppend(ctx: AppContext, workspaceId: string, total: number): Promise<number> {
  const run = Date.now().toString(36);
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < total) {
      const first = next;
      next += BATCH;
      const outcomes = await ctx.buffer.append(batchOf(workspaceId, run, first));
      if (outcomes.some((outcome) => outcome !== 'accepted')) throw new Error('a new client_event_id was taken for a replay');
      progress('append', Math.min(next, total), total);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  endProgress();
  return total / ((performance.now() - started) / 1000);
}

/**
 * Drains the buffer with `persist` until it is empty, checks that `stored()` then counts every
 * event once, and returns events per second.
 */
export async function measureDrain(ctx: AppContext, total: number, drainBatch: number, persist: PersistEvents, stored: () => Promise<number>): Promise<number> {
  let drained = 0;
  const started = performance.now();
  for (;;) {
    const result = await ctx.buffer.drain(persist, drainBatch);
    drained += result.drained;
    progress('drain', drained, total);
    if (!result.more && result.drained === 0) break;
  }
  endProgress();
  if (drained !== total) throw new Error(`drained ${drained} events, appended ${total}`);
  const seconds = (performance.now() - started) / 1000;
  const count = await stored();
  if (count !== total) throw new Error(`the events table holds ${count} rows, expected ${total}`);
  return total / seconds;
}
