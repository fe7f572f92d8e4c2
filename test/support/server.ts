import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context.js';
import { buildApp } from '../../src/app/http.js';
import { loggerOptions } from '../../src/logger.js';
import { registerJobHandlers } from '../../src/app/jobs.js';
import type { Clock } from '../../src/lib/time.js';
import { createSlices } from '../../src/features/index.js';
import { migrateClickHouse } from '../../src/clickhouse/schema.js';
import { createTestDatabase, type DialectName, type TestDatabase } from './databases.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** A running Verdict on a real socket, on a private database, plus a small HTTP client. */
export interface TestServer {
  url: string;
  ctx: AppContext;
  app: FastifyInstance;
  database: TestDatabase;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Creates a workspace the way `verdict workspaces create` does and returns its key. */
  bootstrap(name?: string): Promise<Bootstrap>;
  close(): Promise<void>;
}

export interface Bootstrap {
  workspaceId: string;
  environmentId: string;
  key: string;
  keyId: string;
  webhookSecret: string;
}

export interface TestServerOptions {
  config?: Partial<Config>;
  clock?: Clock;
  /** Receives every log line (JSON text); logs are discarded otherwise. */
  logLines?: string[];
  /** Reuse another test server's database, to act as a second process on it. */
  database?: TestDatabase;
  /** Leave ClickHouse's migration to the context alone (a server that cannot be reached is not migrated here). */
  skipClickHouseMigration?: boolean;
}

function testLogger(lines: string[] | undefined) {
  if (!lines) return pino({ level: process.env.VERDICT_TEST_LOG_LEVEL ?? 'silent' });
  return pino({ ...loggerOptions('info') }, { write: (line: string) => void lines.push(line) });
}

export async function startTestServer(dialect: DialectName, options: TestServerOptions = {}): Promise<TestServer> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase(dialect));
  const config = loadConfig(
    { VERDICT_DATA_DIR: database.dataDir },
    { database: database.config, port: 0, host: '127.0.0.1', logLevel: 'silent', ...options.config },
  );
  const ctx = await createContext(config, testLogger(options.logLines), {
    migrate: dialect === 'sqlite',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  if (ctx.clickhouse && !options.skipClickHouseMigration) await migrateClickHouse(ctx.clickhouse);
  const slices = createSlices(ctx);
  registerJobHandlers(ctx, slices);
  const app = await buildApp(ctx, slices);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server did not bind a TCP port');
  const url = `http://127.0.0.1:${address.port}`;

  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if (text && /json/.test(response.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  return {
    url,
    ctx,
    app,
    database,
    request,
    async bootstrap(name = 'Acme') {
      const created = await slices.workspaces.createWorkspace(name);
      return {
        workspaceId: created.workspace.id,
        environmentId: created.environment.id,
        key: created.api_key.key,
        keyId: created.api_key.id,
        webhookSecret: created.webhook_secret,
      };
    },
    async close() {
      await app.close();
      await ctx.close();
      if (ownsDatabase) await database.drop();
    },
  };
}
