import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { sqliteSeam } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { openSqlite, sqliteDialectOn } from '../db/sqlite.js';
import { GroupCommit } from '../db/group-commit.js';
import { bufferFileOf, openBufferFile } from './buffer-file.js';
import { drainAcrossFiles, InlineBufferWriter, MAX_EVENTS_PER_GROUP, type CommittedGroup } from './embedded-writer.js';
import { releaseChunks } from './embedded-store.js';
import { PreparedAppendStatements } from './prepared-append.js';
import type { BufferedEvent } from './types.js';
import { writerTaskOf, type WriterRequest, type WriterRole, type WriterTasks } from './writer-thread-protocol.js';
import { timed, type WriterTallies } from './writer-stats.js';

// What each writer thread does (writer-thread-protocol.ts WriterRole), on its own connections.

export interface RoleWork {
  /** The connection whose file this thread checkpoints. */
  connection: BetterSqlite3.Database;
  answer(request: WriterRequest): Promise<unknown>;
}

export function startRole(role: WriterRole, file: string, tallies: WriterTallies, tasks: WriterTasks): RoleWork {
  return role === 'buffer' ? appendRole(bufferFileOf(file), tallies) : mainRole(file, tallies, tasks);
}

function kyselyOn(connection: BetterSqlite3.Database): Kysely<Database> {
  return new Kysely<Database>({ dialect: sqliteDialectOn(() => connection) });
}

interface Handover {
  groups: BufferedEvent[][];
  now: number;
}

/** Appends and purges on the buffer's own file. */
function appendRole(bufferFile: string, tallies: WriterTallies): RoleWork {
  // One connection: Kysely's for transactions and purges; the appends' prepared statements run on it too.
  const connection = openBufferFile(bufferFile);
  const db = kyselyOn(connection);
  const writer = new InlineBufferWriter(db, sqliteSeam, new PreparedAppendStatements(connection, db));
  // Groups that arrive while a commit runs go to the database together in the next one.
  const appends = new GroupCommit<Handover, CommittedGroup>({
    commit: async (handovers) => {
      const now = Math.max(...handovers.map((handover) => handover.now));
      const { outcomes } = await timed(tallies, 'append', () =>
        writer.append(
          handovers.flatMap((handover) => handover.groups),
          now,
        ),
      );
      return splitOutcomes(handovers, outcomes);
    },
    weigh: (handover) => handover.groups.reduce((sum, events) => sum + events.length, 0),
    maxWeight: MAX_EVENTS_PER_GROUP,
  });
  return {
    connection,
    async answer(request) {
      switch (request.op) {
        case 'append':
          return appends.submit({ groups: request.groups, now: request.now });
        case 'purge':
          return timed(tallies, 'purge', () => writer.purgeExpiredKeys(request.now));
        // On this connection, in turn with the appends (drainAcrossFiles says why).
        case 'release':
          return timed(tallies, 'release', () => releaseChunks(db, request.ids));
        case 'close':
          await appends.idle();
          await db.destroy();
          return null;
        default:
          throw new Error(`the buffer's writer thread does not ${request.op}`);
      }
    },
  };
}

/** Each handover's share of a joined group's outcomes, in the order they were joined. */
function splitOutcomes(handovers: Handover[], outcomes: CommittedGroup['outcomes']): CommittedGroup[] {
  let next = 0;
  return handovers.map((handover) => {
    const own = outcomes.slice(next, next + handover.groups.length);
    next += handover.groups.length;
    return { outcomes: own, accepted: own.reduce((sum, events) => sum + events.filter((outcome) => outcome === 'accepted').length, 0) };
  });
}

/** Drains from the buffer's file into the main one, and the API's write tasks on the main file. */
function mainRole(file: string, tallies: WriterTallies, tasks: WriterTasks): RoleWork {
  const connection = openSqlite(file);
  const db = kyselyOn(connection);
  // This connection only reads chunks: the buffer's thread deletes them once drained.
  const bufferConnection = openBufferFile(bufferFileOf(file));
  const buffer = kyselyOn(bufferConnection);
  return {
    connection,
    async answer(request) {
      switch (request.op) {
        case 'drain': {
          const persist = writerTaskOf(tasks, 'persist', request.persist);
          return timed(tallies, 'drain', () => drainAcrossFiles(db, buffer, sqliteSeam, persist, request.maxEvents));
        }
        case 'write': {
          const task = writerTaskOf(tasks, 'write', request.task);
          return timed(tallies, 'write', () => db.transaction().execute((trx) => task(trx, request.input)));
        }
        case 'close':
          await db.destroy();
          await buffer.destroy();
          return null;
        default:
          throw new Error(`the main writer thread does not ${request.op}`);
      }
    },
  };
}
