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

/**
 * Migrates one PostgreSQL template database per run; each test file then clones it, which is
 * much faster than migrating per file and keeps files isolated from each other.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const base = process.env.VERDICT_TEST_DATABASE_URL;
  if (!base) {
    console.warn('\n[verdict] VERDICT_TEST_DATABASE_URL is not set: PostgreSQL variants of the tests are skipped.\n');
    project.provide('pgTemplate', null);
    return async () => undefined;
  }
  const template = `verdict_tpl_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl(base, template), max: 1 }) }) });
  await migrateToLatest(db);
  await db.destroy();
  project.provide('pgTemplate', template);
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
  };
}
