import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../../src/db/database.js';
import type { Database } from '../../src/db/schema.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgTemplate: string | null;
  }
}

function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** tmpfs, where the machine has one with room to spare (the suite's files at a time are a few hundred MB). */
const TMPFS = '/dev/shm';
const TMPFS_ROOM_BYTES = 4 * 1024 ** 3;

/**
 * A folder on tmpfs for the run's scratch files, made the test processes' TMPDIR (and so their
 * children's): every SQLite database, data directory and docs working directory of the tests is
 * made under os.tmpdir(). SQLite syncs its WAL on each commit (synchronous = FULL); on a disk
 * those syncs, not the tests' work, were a good part of many files' time, and on tmpfs they are
 * free. What the tests assert does not depend on where the files are. Null (TMPDIR left as it
 * is) without a tmpfs with room, or when VERDICT_TEST_TMPFS=0.
 */
function tmpfsScratch(): string | null {
  if (process.env.VERDICT_TEST_TMPFS === '0') return null;
  try {
    const stats = fs.statfsSync(TMPFS);
    if (stats.bavail * stats.bsize < TMPFS_ROOM_BYTES) return null;
    const scratch = fs.mkdtempSync(path.join(TMPFS, 'verdict-tests-'));
    // Open to every user, sticky, as /tmp is: some tests run a program as another user (the
    // private PostgreSQL clusters run as postgres when the tests run as root).
    fs.chmodSync(scratch, 0o1777);
    return scratch;
  } catch {
    return null;
  }
}

interface RunSetup {
  template: string | null;
  teardown(): Promise<void>;
}

/** Migrates one PostgreSQL template database; null without VERDICT_TEST_DATABASE_URL. */
async function migratedTemplate(): Promise<{ template: string; drop(): Promise<void> } | null> {
  const base = process.env.VERDICT_TEST_DATABASE_URL;
  if (!base) {
    console.warn('\n[verdict] VERDICT_TEST_DATABASE_URL is not set: PostgreSQL variants of the tests are skipped.\n');
    return null;
  }
  const template = `verdict_tpl_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl(base, template), max: 1 }) }) });
  await migrateToLatest(db);
  await db.destroy();
  return {
    template,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function runSetup(): Promise<RunSetup> {
  const scratch = tmpfsScratch();
  // Read by the test processes, which vitest starts after this setup with its environment.
  if (scratch) process.env.TMPDIR = scratch;
  const migrated = await migratedTemplate();
  return {
    template: migrated?.template ?? null,
    async teardown() {
      await migrated?.drop();
      if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

interface SharedRun {
  setup: Promise<RunSetup>;
  projects: number;
}

/**
 * The run's setup, made by the first project that asks and torn down after the last one's
 * teardown. On globalThis: each project may load this module on its own.
 */
const holder = globalThis as { verdictTestRun?: SharedRun | undefined };

/**
 * Migrates one PostgreSQL template database per run; each test file then clones it, which is
 * much faster than migrating per file and keeps files isolated from each other. Vitest calls
 * this once per project that names it: the projects share the template and the scratch folder.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder.verdictTestRun ??= { setup: runSetup(), projects: 0 };
  const run = holder.verdictTestRun;
  run.projects += 1;
  project.provide('pgTemplate', (await run.setup).template);
  return async () => {
    run.projects -= 1;
    if (run.projects > 0) return;
    holder.verdictTestRun = undefined;
    await (await run.setup).teardown();
  };
}
