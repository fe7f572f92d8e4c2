/**
 * The connection to ClickHouse (docs/deployment.md "ClickHouse"): one `@clickhouse/client` code
 * path for a server (HTTP) and for the engine embedded in this process (npm `chdb`, plugged in
 * through `chdb/connection`). `chdb` is not part of the default install: it is loaded here on
 * demand, and its absence is a start-up error that says how to install it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseConfig } from '../config.js';
import { embeddedRowBatches, exportDirectory, serverRowBatches, type RowBatches } from './row-stream.js';
import { memorySettings } from './settings.js';

/** The chdb release the embedded engine is tested with (.ci/run installs it). */
export const CHDB_VERSION = '3.4.0';

export interface ClickHouse {
  readonly kind: ClickHouseConfig['kind'];
  readonly client: ClickHouseClient;
  /** The cluster the tables are spread over (ON CLUSTER, Replicated and Distributed engines), or null. */
  readonly cluster: string | null;
  /**
   * The embedded engine's insert of rows as bytes (TabSeparated), handed to the engine's parser as
   * they are; absent for a server (`client.insert`). The client's insert into the embedded engine
   * pastes the rows into the SQL text of one statement, which the engine reads again as a query
   * (docs/analysis.md "ClickHouse", the drain).
   */
  readonly insertTabSeparated?: (insert: TabSeparatedInsert) => Promise<void>;
  /** A SELECT's rows a batch at a time, never the whole result in memory (row-stream.ts). */
  readonly rowBatches: RowBatches;
  close(): Promise<void>;
}

export interface TabSeparatedInsert {
  table: string;
  columns: readonly string[];
  /** One row per line, its values in the order of `columns`, escaped as TabSeparated escapes them. */
  rows: Buffer;
  settings: Record<string, string | number>;
}

export class ClickHouseUnavailableError extends Error {}

/**
 * The embedded engine's directory is locked by another process: one process at a time opens it,
 * and while `verdict serve` runs that is the server (docs/deployment.md "ClickHouse").
 */
export class EmbeddedClickHouseHeldError extends ClickHouseUnavailableError {
  constructor(readonly path: string) {
    super(
      `the embedded ClickHouse engine at ${path} is held by another process: a running \`verdict serve\` owns it, and only one process at a time can open it. ` +
        'Run this command while the server is stopped, or ask the server (the analysis: POST /v1/experiments/{id}/results/compute); ' +
        'commands that do not read events (workspaces create, secrets rotate) run beside it.',
    );
  }
}

/** Whether the embedded engine can be loaded here (tests skip, or fail in CI, without it). */
export async function chdbInstalled(): Promise<boolean> {
  try {
    await import('chdb/connection' as string);
    return true;
  } catch {
    return false;
  }
}

interface ChdbConnection {
  chdb: {
    rawInsert(params: {
      table: string;
      values: Buffer;
      format: 'TabSeparated';
      columns: readonly string[];
      settings: Record<string, string | number>;
    }): Promise<unknown>;
  };
}

interface ChdbConnectionModule {
  createChdbConnection(options: { path: string }): ChdbConnection;
}

async function loadChdb(): Promise<ChdbConnectionModule> {
  try {
    // A computed specifier: TypeScript and bundlers must not require the optional package.
    const name = 'chdb/connection';
    return (await import(name)) as ChdbConnectionModule;
  } catch (error) {
    throw new ClickHouseUnavailableError(
      `VERDICT_CLICKHOUSE_URL=chdb:... needs the embedded ClickHouse engine, which is not installed: run \`npm install --no-save chdb@${CHDB_VERSION}\` ` +
        `(about 550 MB; not part of the default install), or point VERDICT_CLICKHOUSE_URL at a ClickHouse server (${(error as Error).message})`,
    );
  }
}

/** Settings every statement runs with: the SQL's NULL semantics (an unmatched LEFT JOIN gives NULLs). */
const SETTINGS = { join_use_nulls: 1 } as const;

/**
 * Opens the engine's directory. ClickHouse locks `<path>/status` while a process has it open (and
 * removes the file when it closes), so a failure beside that file is the lock of another process.
 */
function openChdb(create: ChdbConnectionModule['createChdbConnection'], dataPath: string): ChdbConnection {
  try {
    return create({ path: dataPath });
  } catch (error) {
    if (dataPath !== ':memory:' && fs.existsSync(path.join(dataPath, 'status'))) throw new EmbeddedClickHouseHeldError(dataPath);
    throw error;
  }
}

/** Opens the configured ClickHouse (the embedded engine's directory is created on first use). */
export async function openClickHouse(config: ClickHouseConfig): Promise<ClickHouse> {
  if (config.kind === 'embedded') {
    const { createChdbConnection } = await loadChdb();
    const connection = openChdb(createChdbConnection, config.path);
    const client = createClient({ connection, clickhouse_settings: { ...SETTINGS, ...memorySettings(config) } } as unknown as Parameters<
      typeof createClient
    >[0]);
    const insertTabSeparated = async ({ table, columns, rows, settings }: TabSeparatedInsert) => {
      await connection.chdb.rawInsert({ table, values: rows, format: 'TabSeparated', columns, settings });
    };
    const exports = exportDirectory(config.path);
    const close = async () => {
      await client.close();
      fs.rmSync(exports, { recursive: true, force: true });
    };
    return { kind: 'embedded', client, cluster: null, insertTabSeparated, rowBatches: embeddedRowBatches(client, exports), close };
  }
  const client = createClient({
    url: config.url,
    // A long analysis statement sends progress headers, so no proxy or load balancer between
    // closes the connection for being idle while ClickHouse computes.
    clickhouse_settings: { ...SETTINGS, ...memorySettings(config), send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '30000' },
    request_timeout: 600_000,
    // The client's own console logging is off: every error reaches the caller, which logs it
    // (pino, with the rest of Verdict's log) or answers with it.
    log: { level: ClickHouseLogLevel.OFF },
  });
  return { kind: 'server', client, cluster: config.cluster, rowBatches: serverRowBatches(client), close: () => client.close() };
}
