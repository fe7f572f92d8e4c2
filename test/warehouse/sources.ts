import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import pg from 'pg';
import { openClickHouse } from '../../src/clickhouse/client.js';
import type { DataSourcesConfig } from '../../src/config.js';
import type { TestServer } from '../support/server.js';

/** The password every test source's URL carries: it must never come back (answers, log, audit). */
export const SOURCE_PASSWORD = 'Wh-Secr3t-Pa55word';

/** The machine's server is on loopback: the tests allow private networks, except where they test the refusal. */
export const ALLOW_PRIVATE: DataSourcesConfig = { allowPrivateNetworks: true, statementTimeoutMs: 1_500, connectTimeoutMs: 5_000 };

/**
 * A database of its own on the test run's PostgreSQL server (VERDICT_TEST_DATABASE_URL), dropped
 * afterwards. The source's URL carries a password as a team's would (the test server trusts
 * loopback connections, so any password logs in). `admin` is a connection to it, for setting up
 * and for checking that nothing changed.
 */
export interface PostgresSource {
  url: string;
  admin: pg.Client;
  drop(): Promise<void>;
}

function withDatabase(base: string, database: string, password?: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  if (password) url.password = password;
  return url.toString();
}

export async function createPostgresSource(setupSql: string): Promise<PostgresSource> {
  const base = process.env.VERDICT_TEST_DATABASE_URL;
  if (!base) throw new Error('a PostgreSQL source needs VERDICT_TEST_DATABASE_URL');
  const name = `verdict_wh_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const root = new pg.Client({ connectionString: base });
  await root.connect();
  try {
    await root.query(`CREATE DATABASE ${name}`);
  } finally {
    await root.end();
  }
  const admin = new pg.Client({ connectionString: withDatabase(base, name) });
  await admin.connect();
  await admin.query(setupSql);
  return {
    url: withDatabase(base, name, SOURCE_PASSWORD),
    admin,
    async drop() {
      await admin.end();
      const cleanup = new pg.Client({ connectionString: base });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/**
 * The embedded ClickHouse engine at a directory of its own, set up before any server reads it:
 * the engine keeps a session's settings, and once Verdict's readonly=1 has run, nothing in this
 * process can write there.
 */
export interface ChdbSource {
  url: string;
  client: ClickHouseClient;
  drop(): Promise<void>;
}

export async function createChdbSource(statements: string[]): Promise<ChdbSource> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-wh-chdb-'));
  const { client } = await openClickHouse({ kind: 'embedded', path: dir, cluster: null });
  for (const query of statements) await client.command({ query });
  return { url: `chdb:${dir}`, client, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export async function countOf(client: ClickHouseClient, query: string): Promise<number> {
  const rows = await (await client.query({ query, format: 'JSONEachRow' })).json<{ c: string | number }>();
  return Number(rows[0]?.c);
}

/** Everything a caller can read back about its sources: the answers given, the audit log and the log lines. */
export async function everythingShown(server: TestServer, key: string, lines: string[], answers: string[]): Promise<string> {
  const audit = await server.request('GET', '/v1/audit?limit=200', { key });
  return [...answers, audit.text, ...lines].join('\n');
}
