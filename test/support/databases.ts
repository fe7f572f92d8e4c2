import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';

export type DialectName = 'sqlite' | 'postgres';

/** SQLite always; PostgreSQL when the run has a template database (VERDICT_TEST_DATABASE_URL). */
export function testDialects(): DialectName[] {
  return inject('pgTemplate') ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestDatabase {
  config: DatabaseConfig;
  dataDir: string;
  drop(): Promise<void>;
}

function withDatabase(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A fresh, migrated database of the given kind, private to the caller. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-test-'));
  if (dialect === 'sqlite') {
    return {
      config: { kind: 'sqlite', file: path.join(dataDir, 'verdict.sqlite') },
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const base = process.env.VERDICT_TEST_DATABASE_URL;
  const template = inject('pgTemplate');
  if (!base || !template) throw new Error('PostgreSQL tests need VERDICT_TEST_DATABASE_URL');
  const name = `verdict_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    // A commit then returns without waiting for the shared server's WAL flush (an fsync, slow on
    // a busy disk). Only a crash of that server could lose such a commit, and no test crashes it
    // (the fault tests run a server of their own); what the tests read back, every constraint and
    // every transaction's all-or-nothing, is the same.
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  return {
    config: { kind: 'postgres', url: withDatabase(base, name) },
    dataDir,
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: base });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await cleanup.end();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
