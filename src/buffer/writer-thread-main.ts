import { parentPort, workerData } from 'node:worker_threads';
import { Kysely } from 'kysely';
import { sqliteSeam } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { openSqlite, sqliteDialectOn } from '../db/sqlite.js';
import { GroupCommit } from '../db/group-commit.js';
import type { WriteTask } from '../db/write-tasks.js';
import { InlineBufferWriter, MAX_EVENTS_PER_GROUP, type CommittedGroup } from './embedded-writer.js';
import { PreparedAppendStatements } from './prepared-append.js';
import type { BufferedEvent, ModuleExport, PersistEvents } from './types.js';
import type { WriterReply, WriterRequest, WriterStatsMessage } from './writer-thread-protocol.js';
import { timed, WriterTallies } from './writer-stats.js';

// Runs on the writer thread: the same writes as the inline buffer, on this thread's own connection.
const port = parentPort;
if (!port) throw new Error('writer-thread-main.ts runs only as a worker thread');
// One connection: Kysely's for transactions, drains and purges; the appends' prepared statements run on it too.
const connection = openSqlite((workerData as { file: string }).file);
// This thread checkpoints on its own schedule (checkpointNow below), not inside its commits.
connection.pragma('wal_autocheckpoint = 0');
const db = new Kysely<Database>({ dialect: sqliteDialectOn(() => connection) });
const writer = new InlineBufferWriter(db, sqliteSeam, new PreparedAppendStatements(connection, db));
const tallies = new WriterTallies();

interface Handover {
  groups: BufferedEvent[][];
  now: number;
}

// Groups that arrive while a commit runs go to the database together in the next one.
const appends = new GroupCommit<Handover, CommittedGroup>({
  commit: commitHandovers,
  weigh: (handover) => handover.groups.reduce((sum, events) => sum + events.length, 0),
  maxWeight: MAX_EVENTS_PER_GROUP,
});

async function commitHandovers(handovers: Handover[]): Promise<CommittedGroup[]> {
  const now = Math.max(...handovers.map((handover) => handover.now));
  const groups = handovers.flatMap((handover) => handover.groups);
  const { outcomes } = await timed(tallies, 'append', () => writer.append(groups, now));
  checkpointAfterReplies();
  let next = 0;
  return handovers.map((handover) => {
    const own = outcomes.slice(next, next + handover.groups.length);
    next += handover.groups.length;
    return { outcomes: own, accepted: own.reduce((sum, events) => sum + events.filter((outcome) => outcome === 'accepted').length, 0) };
  });
}

const exportedFunctions = new Map<string, Promise<unknown>>();

/** A function another module exports (the drain's persist function, a write task), imported once. */
function functionAt<F>(location: ModuleExport): Promise<F> {
  const key = `${location.moduleUrl}#${location.exportName}`;
  let loaded = exportedFunctions.get(key);
  if (!loaded) {
    loaded = import(location.moduleUrl).then((module: Record<string, unknown>) => {
      const exported = module[location.exportName];
      if (typeof exported !== 'function') throw new Error(`${key} is not a function`);
      return exported;
    });
    exportedFunctions.set(key, loaded);
  }
  return loaded as Promise<F>;
}

async function answer(request: WriterRequest): Promise<unknown> {
  switch (request.op) {
    case 'append':
      return appends.submit({ groups: request.groups, now: request.now });
    case 'drain': {
      const persist = await functionAt<PersistEvents>(request.persist);
      return afterwardsCheckpoint(timed(tallies, 'drain', () => writer.drain(persist, request.maxEvents)));
    }
    case 'write': {
      const task = await functionAt<WriteTask<unknown, unknown>>(request.task);
      return afterwardsCheckpoint(timed(tallies, 'write', () => db.transaction().execute((trx) => task(trx, request.input))));
    }
    case 'purge':
      return timed(tallies, 'purge', () => writer.purgeExpiredKeys(request.now));
    case 'close':
      await appends.idle();
      await db.destroy();
      return null;
  }
}

// Checkpoints belong on this thread: on the API thread a checkpoint held every request while it
// copied pages and synced, so context.ts raises the API connection's threshold tenfold. They run
// between this thread's pieces of work, at most every CHECKPOINT_SPACING_MS, and not inside its
// commits (SQLite's wal_autocheckpoint, off here): while a snapshot's read threads hold the WAL
// open it cannot be restarted, so past 1,000 pages every commit ran a checkpoint of its own, with
// two fsyncs, and single events waited 78-98 ms behind group commits (docs/benchmarks.md, soak).
// The timer covers a WAL grown by the API thread's commits while no event arrives. PASSIVE never
// waits for readers or writers. (A checkpointer thread of its own was tried and removed: it copied
// hot pages ten times as often, and in a soak the process's heap grew by 400 MB in four minutes
// while single events answered no faster; docs/events.md "Checkpoints".)
const CHECKPOINT_SPACING_MS = 250;
let lastCheckpoint = 0;

function checkpointWhenDue(): void {
  const started = performance.now();
  if (started - lastCheckpoint < CHECKPOINT_SPACING_MS || connection.inTransaction) return;
  lastCheckpoint = started;
  try {
    connection.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked: the next piece of work, or the timer, tries again.
  }
  tallies.record('checkpoint', performance.now() - started);
}

let checkpointQueued = false;

/** After the replies of the piece of work that just ended have been posted: they never wait for it. */
function checkpointAfterReplies(): void {
  if (checkpointQueued) return;
  checkpointQueued = true;
  setImmediate(() => {
    checkpointQueued = false;
    checkpointWhenDue();
  });
}

async function afterwardsCheckpoint<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } finally {
    checkpointAfterReplies();
  }
}

setInterval(checkpointWhenDue, 5_000).unref();

const STATS_EVERY_MS = 1_000;
setInterval(() => {
  const stats = tallies.take();
  if (stats) port.postMessage({ stats } satisfies WriterStatsMessage);
}, STATS_EVERY_MS).unref();

port.on('message', (request: WriterRequest) => {
  answer(request).then(
    (result) => port.postMessage({ id: request.id, result } satisfies WriterReply),
    (error: unknown) => {
      const { message, code } = error as { message?: unknown; code?: unknown };
      const reply: WriterReply = { id: request.id, error: { message: String(message ?? error), ...(typeof code === 'string' ? { code } : {}) } };
      port.postMessage(reply);
    },
  );
});
