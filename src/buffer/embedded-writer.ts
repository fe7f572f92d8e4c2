import type { Db, Tx } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import { appendChunks, claimChunks, claimDedupeKeys, countPending, dedupeKeyOf, deleteChunks, deleteExpiredKeys, type DedupeKey } from './embedded-store.js';
import { DEDUPE_WINDOW_MS, type AppendOutcome, type BufferedEvent, type DrainResult, type PersistEvents } from './types.js';

/**
 * The two writes of an append, inside its transaction: claim the de-duplication keys (returning
 * the ones that were new) and store the accepted events. Kysely's statements by default; on the
 * writer thread, statements prepared once on its own SQLite connection (prepared-append.ts).
 */
export interface AppendStatements {
  claimKeys(trx: Tx, keys: DedupeKey[], expiresAt: number): Promise<Set<string>> | Set<string>;
  storeChunks(trx: Tx, events: BufferedEvent[], now: number): Promise<void> | void;
}

const kyselyAppendStatements: AppendStatements = { claimKeys: claimDedupeKeys, storeChunks: appendChunks };

/** What one committed group of appends became: each request's outcomes, and how many events were new. */
export interface CommittedGroup {
  outcomes: AppendOutcome[][];
  accepted: number;
}

/**
 * The writes of the embedded buffer: a group of appends in one transaction, and a drain round.
 * They run on the API's own connection (`InlineBufferWriter`), or, for a SQLite file, on a
 * thread of their own (`ThreadBufferWriter`), so that neither their statements nor the fsync of
 * their commits hold up the event loop that answers requests.
 */
export interface BufferWriter {
  /** How many groups the buffer may hand over before the first is committed (see GroupCommit). */
  readonly groupsInFlight: number;
  /** Claims the de-duplication keys of every request in `groups` and stores the new events, in one transaction. */
  append(groups: BufferedEvent[][], now: number): Promise<CommittedGroup>;
  /** Moves up to `maxEvents` buffered events into `persist` and releases them, in one transaction. */
  drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult>;
  /** Forgets the de-duplication keys expired by `now`, in short transactions; returns how many. */
  purgeExpiredKeys(now: number): Promise<number>;
  /** How many events are buffered, read on the caller's thread. */
  countPending(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A group stops growing at this many events, which bounds one transaction's duration: the
 * buffer's groups, and on the writer thread the groups it joins from several handovers.
 */
export const MAX_EVENTS_PER_GROUP = 2_000;

/** Keys deleted per transaction of a purge, so no purge holds the write lock for long. */
const PURGE_BATCH = 5_000;

/** The distinct keys of a group, each once, in first-seen order. */
function keysOf(groups: BufferedEvent[][]): DedupeKey[] {
  const keys = new Map<string, DedupeKey>();
  for (const events of groups) {
    for (const event of events) {
      if (event.client_event_id === null) continue;
      const key = dedupeKeyOf(event.workspace_id, event.client_event_id);
      if (!keys.has(key)) keys.set(key, { workspace_id: event.workspace_id, client_event_id: event.client_event_id });
    }
  }
  return [...keys.values()];
}

/**
 * Decides each event of a committed group: an event without a client_event_id is always new;
 * of the events sharing a key, only the first is new and only if this group won the key.
 */
function decide(groups: BufferedEvent[][], claimed: Set<string>): { outcomes: AppendOutcome[][]; accepted: BufferedEvent[] } {
  const used = new Set<string>();
  const accepted: BufferedEvent[] = [];
  const outcomes = groups.map((events) =>
    events.map((event): AppendOutcome => {
      if (event.client_event_id !== null) {
        const key = dedupeKeyOf(event.workspace_id, event.client_event_id);
        if (!claimed.has(key) || used.has(key)) return 'replay';
        used.add(key);
      }
      accepted.push(event);
      return 'accepted';
    }),
  );
  return { outcomes, accepted };
}

/** The buffer's writes on the given connection, in the caller's thread. */
export class InlineBufferWriter implements BufferWriter {
  readonly groupsInFlight = 1;

  constructor(
    private readonly db: Db,
    private readonly seam: DialectSeam,
    private readonly statements: AppendStatements = kyselyAppendStatements,
  ) {}

  async append(groups: BufferedEvent[][], now: number): Promise<CommittedGroup> {
    const decided = await this.db.transaction().execute(async (trx: Tx) => {
      const keys = keysOf(groups);
      const claimed = keys.length > 0 ? await this.statements.claimKeys(trx, keys, now + DEDUPE_WINDOW_MS) : new Set<string>();
      const result = decide(groups, claimed);
      if (result.accepted.length > 0) await this.statements.storeChunks(trx, result.accepted, now);
      return result;
    });
    return { outcomes: decided.outcomes, accepted: decided.accepted.length };
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    // A plain read first: an idle drainer should not take SQLite's write lock every poll.
    if (!(await hasBufferedChunks(this.db))) return { drained: 0, more: false };
    return this.db.transaction().execute(async (trx) => {
      const { ids, events, more } = await claimChunks(trx, this.seam, maxEvents);
      if (ids.length > 0) {
        await persist(trx, events);
        await deleteChunks(trx, ids);
      }
      return { drained: events.length, more };
    });
  }

  async purgeExpiredKeys(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await deleteExpiredKeys(this.db, now, PURGE_BATCH);
      total += removed;
      if (removed < PURGE_BATCH) return total;
    }
  }

  countPending(): Promise<number> {
    return countPending(this.db);
  }

  async close(): Promise<void> {
    // The connection belongs to the caller.
  }
}

/** What a drain across files stored: the chunks to delete from the buffer's file now that their events are committed. */
export interface StoredDrain {
  ids: string[];
  /** True when the drain stopped at its limit and more is waiting. */
  more: boolean;
}

/**
 * A drain from the buffer's own file (`buffer`) into the events table of the main one (`db`):
 * the chunks are read and their events stored in one transaction of the main file, which also
 * keeps drainers of several processes from taking the same chunks at once. The caller then
 * deletes the chunks from the buffer's file (releaseChunks) on the buffer's own thread, in turn
 * with the appends: polled from here for the buffer file's lock, a delete lost to back-to-back
 * appends for seconds (4.9 s in a soak's first minute) while the drainer and every event behind
 * it waited. Two files cannot commit together; a crash in between leaves chunks whose events are
 * stored, and the next drain stores them again, which the events table ignores (store.ts); the
 * release counts the events of the chunks it deleted, so a chunk drained twice is counted once.
 */
export async function drainAcrossFiles(db: Db, buffer: Db, seam: DialectSeam, persist: PersistEvents, maxEvents: number): Promise<StoredDrain> {
  const claimed = await db.transaction().execute(async (trx) => {
    const chunks = await claimChunks(buffer, seam, maxEvents);
    if (chunks.ids.length > 0) await persist(trx, chunks.events);
    return chunks;
  });
  return { ids: claimed.ids, more: claimed.ids.length > 0 && claimed.more };
}

async function hasBufferedChunks(db: Db): Promise<boolean> {
  return (await db.selectFrom('event_buffer').select('id').limit(1).executeTakeFirst()) !== undefined;
}
