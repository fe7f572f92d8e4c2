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
      return timed(tallies, 'drain', () => writer.drain(persist, request.maxEvents));
    }
    case 'write': {
      const task = await functionAt<WriteTask<unknown, unknown>>(request.task);
      return timed(tallies, 'write', () => db.transaction().execute((trx) => task(trx, request.input)));
    }
    case 'purge':
      return timed(tallies, 'purge', () => writer.purgeExpiredKeys(request.now));
    case 'close':
      await appends.idle();
      await db.destroy();
      return null;
  }
}

// Checkpoints belong on this thread: a checkpoint runs inside whichever commit passes the WAL's
// threshold, and on the API thread that held every request while it copied pages and synced, so
// context.ts raises the API connection's threshold tenfold. This thread's own commits checkpoint
// at SQLite's default; the timer covers a WAL grown by the API thread's commits alone while no
// event arrives. PASSIVE never waits for readers or writers. (A checkpointer thread of its own,
// copying the WAL beside this thread's commits, was tried and removed: it copied hot pages ten
// times as often, and in a soak the process's heap grew by 400 MB in four minutes while single
// events answered no faster; docs/events.md "Checkpoints".)
const CHECKPOINT_EVERY_MS = 5_000;
setInterval(() => {
  if (connection.inTransaction) return;
  const started = performance.now();
  try {
    connection.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked: the next tick, or this thread's next commit, tries again.
  }
  tallies.record('checkpoint', performance.now() - started);
}, CHECKPOINT_EVERY_MS).unref();

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
