import os from 'node:os';
import path from 'node:path';

export type DatabaseConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** Where acknowledged events wait before the drainer moves them into the events table. */
export type BufferConfig = { kind: 'embedded' } | { kind: 'redis'; url: string; prefix: string };

/**
 * Where events live and the analysis runs when VERDICT_CLICKHOUSE_URL is set (docs/deployment.md
 * "ClickHouse"): a ClickHouse server or cluster over HTTP, or the engine embedded in this process
 * (npm `chdb`, installed on demand). Null: events and analysis stay in the primary database.
 */
export type ClickHouseConfig = ({ kind: 'server'; url: string; cluster: string | null } | { kind: 'embedded'; path: string; cluster: null }) & {
  /**
   * VERDICT_CLICKHOUSE_MAX_MEMORY: the memory one statement may use (bytes; 0: no limit of
   * Verdict's), beyond which aggregation, sorting and joins spill to disk (clickhouse/settings.ts).
   * Unset: a default for the embedded engine, the server's own profile for a server.
   */
  maxMemoryBytes?: number | null;
};

export interface EventIngestConfig {
  /** More pending (acknowledged, not yet persisted) events than this answers 429. */
  maxPending: number;
  /** Most events the drainer moves per transaction. */
  drainBatchSize: number;
  /** How long the drainer waits after a partial batch before looking again. */
  drainIntervalMs: number;
  /** Redis mode: entries a consumer has held this long unacknowledged are taken over (it died). */
  claimIdleMs: number;
  /** Embedded buffer on a SQLite file: its commits and drains run on a writer thread of their own (false: on the API's thread). */
  writerThread: boolean;
}

/** The outbound lane's pool: webhook deliveries, which wait on other people's servers. */
export interface OutboundPool {
  /** VERDICT_WEBHOOK_CONCURRENCY: deliveries one process sends at once, beside its general lane. */
  concurrency: number;
  /** VERDICT_WEBHOOK_WORKSPACE_CONCURRENCY: deliveries of one workspace in flight at once, on every worker together. */
  perWorkspace: number;
}

export const DEFAULT_OUTBOUND_POOL: OutboundPool = { concurrency: 16, perWorkspace: 4 };

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  database: DatabaseConfig;
  buffer: BufferConfig;
  /** VERDICT_CLICKHOUSE_URL and VERDICT_CLICKHOUSE_CLUSTER; null when unset. */
  clickhouse: ClickHouseConfig | null;
  events: EventIngestConfig;
  logLevel: string;
  /** Largest accepted request body in bytes. */
  bodyLimit: number;
  /** 32-byte key (hex or base64) that encrypts stored secrets; a key file in dataDir otherwise. */
  secretKey: string | null;
  /** Serves the no-op route the benchmarks compare against. */
  benchRoutes: boolean;
  /**
   * Responses ended in one turn of the event loop are written together at its end
   * (http/turn-batched-response.ts); VERDICT_RESPONSE_BATCHING=0 writes each when it ends.
   */
  responseBatching: boolean;
  /** Serves GET /metrics (Prometheus text) and measures each request for it; VERDICT_METRICS=0 turns both off. */
  metrics: boolean;
  /**
   * Browser origins allowed to call the routes a client key may call (assign, events, exposures,
   * OFREP) across origins: '*' (any), a list, or false (no CORS headers at all).
   */
  corsOrigins: '*' | string[] | false;
  /** How often the in-memory last_used_at marks are written to the database. */
  keyUsageFlushMs: number;
  /** How long a validated API key stays cached; bounds how late a revocation is seen elsewhere. */
  keyCacheTtlMs: number;
  /** How long experiment definitions stay cached without a change notice. */
  assignmentCacheTtlMs: number;
  /**
   * How long a stored assignment stays cached. It only changes by a re-bucket, which sends a change
   * notice; the TTL bounds a lost notice. Longer than the definitions' TTL, because a returning
   * unit is the common assign call and each expiry costs it a database round trip.
   */
  stickyCacheTtlMs: number;
  /**
   * How many (experiment, unit) assignments one process keeps in memory, least recently used
   * dropped first: about 750 bytes of heap each. A miss costs one indexed read.
   */
  stickyCacheSize: number;
  /** HTTP processes `serve` runs, sharing one port (Node's cluster); 1 serves from this process. */
  apiProcesses: number;
  /** `concurrency`: the general lane's pool per process; `outbound`: the delivery pool (docs/webhooks.md). */
  jobs: { pollIntervalMs: number; leaseMs: number; concurrency: number; outbound: OutboundPool };
  /** VERDICT_EVENT_RETENTION_DAYS: raw events (and exposures of long-archived experiments) older than this are purged; null keeps everything. */
  eventRetentionDays: number | null;
  /**
   * How long a stop (SIGTERM/SIGINT) may take: after it the process logs what it was still
   * waiting for and exits with status 1 (src/cli/shutdown.ts). Running jobs get half of it, at
   * most 10 s, before they are aborted and put back in the queue; the default (20 s) keeps those
   * 10 s and, with the log's 2 s exit flush, stays under Kubernetes' 30 s grace period.
   */
  shutdownTimeoutMs: number;
  /** The analysis's big reads: SQLite worker threads (0: on the main connection) and PostgreSQL work_mem. */
  analysis: { threads: number; workMem: string };
  /** Outbound webhook deliveries (docs/webhooks.md "Outbound deliveries"). */
  outbound: OutboundConfig;
  /** Warehouse sources (docs/warehouse.md). */
  dataSources: DataSourcesConfig;
  /** Where people reach this service (e.g. https://verdict.example.com), for links in alerts; null leaves links out. */
  publicUrl: string | null;
  /** Signing in to the admin UI by pasting a server key; VERDICT_UI_KEY_SIGN_IN=0 leaves people's accounts as the only way in. */
  uiKeySignIn: boolean;
  /** Single sign-on with OpenID Connect (docs/deployment.md "Single sign-on"); null when VERDICT_OIDC_ISSUER is unset. */
  oidc: OidcConfig | null;
}

export interface OidcConfig {
  /** VERDICT_OIDC_ISSUER: the provider's issuer URL; its /.well-known/openid-configuration is read. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** VERDICT_OIDC_WORKSPACE: the workspace (id) people who sign in this way belong to. */
  workspaceId: string;
  /** VERDICT_OIDC_ROLE_CLAIM: the id_token claim (a string or a list) that carries the role; default `verdict_role`. */
  roleClaim: string;
  /** VERDICT_OIDC_ROLE_VALUES: claim values per role, e.g. `admin=verdict-admins,editor=eng`; each role also matches its own name. */
  roleValues: Record<'viewer' | 'editor' | 'admin', string[]>;
  /** VERDICT_OIDC_DEFAULT_ROLE: the role of a person whose claim names none; `none` refuses them. */
  defaultRole: 'viewer' | 'editor' | 'admin' | null;
}

export interface OutboundConfig {
  /** The first retry's delay; each later one doubles (with jitter). */
  retryBaseMs: number;
  /** A delivery attempt that has no complete answer by then failed. */
  timeoutMs: number;
  /** Send to private, loopback and link-local addresses too (tests, or endpoints inside a private network). */
  allowPrivateNetworks: boolean;
  /** A delivery whose host name has not resolved by then fails that attempt. */
  dnsTimeoutMs: number;
  /** Endpoints one workspace may have; creating one more is refused. */
  maxEndpointsPerWorkspace: number;
}

export interface DataSourcesConfig {
  /** Connect to private, loopback and link-local addresses too (a warehouse inside the same private network). */
  allowPrivateNetworks: boolean;
  /** Every query Verdict runs on a source stops after this (PostgreSQL statement_timeout, ClickHouse max_execution_time). */
  statementTimeoutMs: number;
  /** A connection (DNS included) not made by then fails. */
  connectTimeoutMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const DAY_MS = 86_400_000;

/**
 * The range of every numeric setting read from the environment (README "Configuration"). A value
 * outside it, or not written as plain decimal digits, stops the start with an error naming the
 * variable: `Number()` alone would read `1e9`, `0x10`, `0b11` or `" 7 "` as numbers, and a
 * retention of 1e9 days makes every purge's cutoff an invalid date.
 */
export const NUMERIC_SETTINGS = {
  PORT: { min: 0, max: 65_535 },
  VERDICT_BODY_LIMIT_BYTES: { min: 1024, max: 1024 * 1024 * 1024 },
  VERDICT_BUFFER_MAX_PENDING: { min: 1, max: 100_000_000 },
  VERDICT_BUFFER_DRAIN_BATCH: { min: 1, max: 1_000_000 },
  VERDICT_BUFFER_DRAIN_INTERVAL_MS: { min: 1, max: 3_600_000 },
  VERDICT_BUFFER_CLAIM_IDLE_MS: { min: 100, max: DAY_MS },
  VERDICT_KEY_USAGE_FLUSH_MS: { min: 100, max: DAY_MS },
  VERDICT_KEY_CACHE_TTL_MS: { min: 0, max: DAY_MS },
  VERDICT_ASSIGNMENT_CACHE_TTL_MS: { min: 1, max: DAY_MS },
  VERDICT_STICKY_CACHE_TTL_MS: { min: 1, max: DAY_MS },
  VERDICT_STICKY_CACHE_SIZE: { min: 1, max: 100_000_000 },
  VERDICT_API_PROCESSES: { min: 1, max: 64 },
  VERDICT_JOB_POLL_MS: { min: 10, max: 3_600_000 },
  VERDICT_JOB_LEASE_MS: { min: 100, max: DAY_MS },
  VERDICT_JOB_CONCURRENCY: { min: 1, max: 256 },
  VERDICT_WEBHOOK_CONCURRENCY: { min: 1, max: 1024 },
  VERDICT_WEBHOOK_WORKSPACE_CONCURRENCY: { min: 1, max: 1024 },
  VERDICT_EVENT_RETENTION_DAYS: { min: 1, max: 36_500 },
  VERDICT_SHUTDOWN_TIMEOUT_MS: { min: 100, max: 600_000 },
  VERDICT_ANALYSIS_THREADS: { min: 0, max: 64 },
  VERDICT_WEBHOOK_RETRY_BASE_MS: { min: 1, max: DAY_MS },
  VERDICT_WEBHOOK_TIMEOUT_MS: { min: 1, max: 600_000 },
  VERDICT_WEBHOOK_DNS_TIMEOUT_MS: { min: 1, max: 60_000 },
  VERDICT_WEBHOOK_MAX_ENDPOINTS: { min: 1, max: 10_000 },
  VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS: { min: 100, max: 3_600_000 },
  VERDICT_DATA_SOURCE_CONNECT_TIMEOUT_MS: { min: 100, max: 120_000 },
} as const satisfies Record<string, { min: number; max: number }>;
export type NumericSetting = keyof typeof NUMERIC_SETTINGS;

/** A stop that may take longer than this is no stop (setTimeout also caps delays near 24.8 days). */
export const MAX_SHUTDOWN_TIMEOUT_MS = NUMERIC_SETTINGS.VERDICT_SHUTDOWN_TIMEOUT_MS.max;

/** More HTTP processes than this is a typo, not a deployment. */
export const MAX_API_PROCESSES = NUMERIC_SETTINGS.VERDICT_API_PROCESSES.max;

const PLAIN_INTEGER = /^[0-9]{1,16}$/;

/**
 * Reads `raw` as a whole number from min to max written in decimal digits only, or throws a
 * ConfigError naming `name` (a variable or a command-line option).
 */
export function parseBoundedInteger(name: string, raw: string, min: number, max: number): number {
  const value = PLAIN_INTEGER.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (decimal digits only), got "${raw}"`);
  }
  return value;
}

function integer(env: Env, name: NumericSetting, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return parseBoundedInteger(name, raw, NUMERIC_SETTINGS[name].min, NUMERIC_SETTINGS[name].max);
}

/** An integer setting that is off (null) when unset. */
function optionalInteger(env: Env, name: NumericSetting): number | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : integer(env, name, 0);
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${raw}"`);
}

const ORIGIN = /^https?:\/\/[^/\s?#]+$/;

function corsOrigins(env: Env): '*' | string[] | false {
  const raw = (env.VERDICT_CORS_ORIGINS ?? '').trim();
  if (raw === '' || raw === '*') return '*';
  if (raw === 'off' || raw === '0' || raw === 'false') return false;
  const origins = raw.split(',').map((origin) => origin.trim().replace(/\/$/, ''));
  const invalid = origins.filter((origin) => !ORIGIN.test(origin));
  if (invalid.length > 0) {
    throw new ConfigError(
      `VERDICT_CORS_ORIGINS must be *, off, or a comma-separated list of origins such as https://app.example.com; not an origin: "${invalid.join('", "')}"`,
    );
  }
  return origins;
}

function workMem(env: Env): string {
  const raw = env.VERDICT_ANALYSIS_WORK_MEM || '256MB';
  if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(raw)) throw new ConfigError(`VERDICT_ANALYSIS_WORK_MEM must be a PostgreSQL size such as 256MB, got "${raw}"`);
  return raw;
}

const OIDC_ROLES = ['viewer', 'editor', 'admin'] as const;

function roleValuesFrom(raw: string): OidcConfig['roleValues'] {
  const values: OidcConfig['roleValues'] = { viewer: ['viewer'], editor: ['editor'], admin: ['admin'] };
  for (const pair of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [role, value] = pair.split('=').map((part) => part.trim());
    if (!role || !value || !(OIDC_ROLES as readonly string[]).includes(role)) {
      throw new ConfigError(`VERDICT_OIDC_ROLE_VALUES must be role=value pairs (roles viewer, editor, admin) separated by commas, got "${pair}"`);
    }
    values[role as OidcConfig['defaultRole'] & string].push(value);
  }
  return values;
}

function oidcFrom(env: Env): OidcConfig | null {
  const issuer = (env.VERDICT_OIDC_ISSUER ?? '').trim();
  if (!issuer) return null;
  if (!/^https?:\/\/[^\s]+$/.test(issuer)) throw new ConfigError(`VERDICT_OIDC_ISSUER must be an http(s) URL, got "${issuer}"`);
  const clientId = (env.VERDICT_OIDC_CLIENT_ID ?? '').trim();
  const clientSecret = env.VERDICT_OIDC_CLIENT_SECRET ?? '';
  const workspaceId = (env.VERDICT_OIDC_WORKSPACE ?? '').trim();
  if (!clientId || !clientSecret || !workspaceId) {
    throw new ConfigError('VERDICT_OIDC_ISSUER needs VERDICT_OIDC_CLIENT_ID, VERDICT_OIDC_CLIENT_SECRET and VERDICT_OIDC_WORKSPACE too');
  }
  const defaultRole = (env.VERDICT_OIDC_DEFAULT_ROLE ?? 'viewer').trim();
  if (defaultRole !== 'none' && !(OIDC_ROLES as readonly string[]).includes(defaultRole)) {
    throw new ConfigError(`VERDICT_OIDC_DEFAULT_ROLE must be viewer, editor, admin or none, got "${defaultRole}"`);
  }
  return {
    issuer: issuer.replace(/\/+$/, ''),
    clientId,
    clientSecret,
    workspaceId,
    roleClaim: (env.VERDICT_OIDC_ROLE_CLAIM ?? '').trim() || 'verdict_role',
    roleValues: roleValuesFrom(env.VERDICT_OIDC_ROLE_VALUES ?? ''),
    defaultRole: defaultRole === 'none' ? null : (defaultRole as OidcConfig['defaultRole']),
  };
}

function publicUrlFrom(env: Env): string | null {
  const raw = (env.VERDICT_PUBLIC_URL ?? '').trim();
  if (raw === '') return null;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new ConfigError(`VERDICT_PUBLIC_URL must be an http(s) URL such as https://verdict.example.com, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function databaseFrom(env: Env, dataDir: string): DatabaseConfig {
  const url = env.VERDICT_DATABASE_URL;
  if (!url) return { kind: 'sqlite', file: path.join(dataDir, 'verdict.sqlite') };
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  if (url.startsWith('sqlite:')) return { kind: 'sqlite', file: path.resolve(url.slice('sqlite:'.length)) };
  throw new ConfigError('VERDICT_DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
}

function bufferFrom(env: Env): BufferConfig {
  const url = env.VERDICT_REDIS_URL;
  if (!url) return { kind: 'embedded' };
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError('VERDICT_REDIS_URL must start with redis:// or rediss://');
  return { kind: 'redis', url, prefix: env.VERDICT_REDIS_PREFIX || 'verdict:' };
}

const CLUSTER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function clickhouseFrom(env: Env): ClickHouseConfig | null {
  const url = (env.VERDICT_CLICKHOUSE_URL ?? '').trim();
  const cluster = (env.VERDICT_CLICKHOUSE_CLUSTER ?? '').trim() || null;
  if (url === '') {
    if (cluster !== null) throw new ConfigError('VERDICT_CLICKHOUSE_CLUSTER is set but VERDICT_CLICKHOUSE_URL is not: name the cluster of a ClickHouse server');
    return null;
  }
  if (cluster !== null && !CLUSTER_NAME.test(cluster))
    throw new ConfigError(`VERDICT_CLICKHOUSE_CLUSTER must be a cluster name such as verdict_cluster, got "${cluster}"`);
  if (url.startsWith('chdb:')) {
    const file = url.slice('chdb:'.length);
    if (file === '') throw new ConfigError('VERDICT_CLICKHOUSE_URL=chdb:PATH needs the directory of the embedded engine, such as chdb:./data/clickhouse');
    if (cluster !== null)
      throw new ConfigError('VERDICT_CLICKHOUSE_CLUSTER needs a ClickHouse server (http://...); the embedded engine (chdb:) has no cluster');
    return { kind: 'embedded', path: path.resolve(file), cluster: null, maxMemoryBytes: memoryFrom(env) };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError('VERDICT_CLICKHOUSE_URL must be http(s)://user:password@host:8123/database (a ClickHouse server) or chdb:PATH (the embedded engine)');
  }
  return { kind: 'server', url, cluster, maxMemoryBytes: memoryFrom(env) };
}

const SIZE_UNITS: Record<string, number> = { '': 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30 };

/** VERDICT_CLICKHOUSE_MAX_MEMORY: bytes, or a size such as 4GB or 512MB; 0 lifts Verdict's limit; null when unset. */
function memoryFrom(env: Env): number | null {
  const raw = (env.VERDICT_CLICKHOUSE_MAX_MEMORY ?? '').trim();
  if (raw === '') return null;
  const match = /^([0-9]+)\s*(KB|MB|GB)?$/i.exec(raw);
  const bytes = match ? Number(match[1]) * (SIZE_UNITS[(match[2] ?? '').toUpperCase()] ?? 1) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || (bytes > 0 && bytes < 64 * 2 ** 20))
    throw new ConfigError(`VERDICT_CLICKHOUSE_MAX_MEMORY must be 0 (no limit) or a size of at least 64MB such as 4GB or 512MB, got "${raw}"`);
  return bytes;
}

function eventIngestFrom(env: Env): EventIngestConfig {
  return {
    maxPending: integer(env, 'VERDICT_BUFFER_MAX_PENDING', 100_000),
    drainBatchSize: integer(env, 'VERDICT_BUFFER_DRAIN_BATCH', 10_000),
    drainIntervalMs: integer(env, 'VERDICT_BUFFER_DRAIN_INTERVAL_MS', 50),
    claimIdleMs: integer(env, 'VERDICT_BUFFER_CLAIM_IDLE_MS', 30_000),
    writerThread: flag(env, 'VERDICT_BUFFER_WRITER_THREAD', true),
  };
}

/** Reads and validates the whole configuration once; nothing else reads process.env. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = path.resolve(env.VERDICT_DATA_DIR || './data');
  const config: Config = {
    host: env.HOST || '0.0.0.0',
    port: integer(env, 'PORT', 8080),
    dataDir,
    database: databaseFrom(env, dataDir),
    buffer: bufferFrom(env),
    clickhouse: clickhouseFrom(env),
    events: eventIngestFrom(env),
    logLevel: env.VERDICT_LOG_LEVEL || env.LOG_LEVEL || 'info',
    bodyLimit: integer(env, 'VERDICT_BODY_LIMIT_BYTES', 1024 * 1024),
    secretKey: env.VERDICT_SECRET_KEY || null,
    benchRoutes: env.VERDICT_BENCH_ROUTES === '1',
    metrics: flag(env, 'VERDICT_METRICS', true),
    responseBatching: flag(env, 'VERDICT_RESPONSE_BATCHING', true),
    corsOrigins: corsOrigins(env),
    keyUsageFlushMs: integer(env, 'VERDICT_KEY_USAGE_FLUSH_MS', 30_000),
    keyCacheTtlMs: integer(env, 'VERDICT_KEY_CACHE_TTL_MS', 5_000),
    assignmentCacheTtlMs: integer(env, 'VERDICT_ASSIGNMENT_CACHE_TTL_MS', 5_000),
    stickyCacheTtlMs: integer(env, 'VERDICT_STICKY_CACHE_TTL_MS', 600_000),
    stickyCacheSize: integer(env, 'VERDICT_STICKY_CACHE_SIZE', 1_000_000),
    apiProcesses: integer(env, 'VERDICT_API_PROCESSES', 1),
    jobs: {
      pollIntervalMs: integer(env, 'VERDICT_JOB_POLL_MS', 1_000),
      leaseMs: integer(env, 'VERDICT_JOB_LEASE_MS', 60_000),
      concurrency: integer(env, 'VERDICT_JOB_CONCURRENCY', 4),
      outbound: {
        concurrency: integer(env, 'VERDICT_WEBHOOK_CONCURRENCY', DEFAULT_OUTBOUND_POOL.concurrency),
        perWorkspace: integer(env, 'VERDICT_WEBHOOK_WORKSPACE_CONCURRENCY', DEFAULT_OUTBOUND_POOL.perWorkspace),
      },
    },
    eventRetentionDays: optionalInteger(env, 'VERDICT_EVENT_RETENTION_DAYS'),
    shutdownTimeoutMs: integer(env, 'VERDICT_SHUTDOWN_TIMEOUT_MS', 20_000),
    analysis: {
      threads: integer(env, 'VERDICT_ANALYSIS_THREADS', Math.min(os.availableParallelism(), 4)),
      workMem: workMem(env),
    },
    outbound: {
      retryBaseMs: integer(env, 'VERDICT_WEBHOOK_RETRY_BASE_MS', 60_000),
      timeoutMs: integer(env, 'VERDICT_WEBHOOK_TIMEOUT_MS', 10_000),
      allowPrivateNetworks: flag(env, 'VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
      dnsTimeoutMs: integer(env, 'VERDICT_WEBHOOK_DNS_TIMEOUT_MS', 2_000),
      maxEndpointsPerWorkspace: integer(env, 'VERDICT_WEBHOOK_MAX_ENDPOINTS', 20),
    },
    dataSources: {
      allowPrivateNetworks: flag(env, 'VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS', false),
      statementTimeoutMs: integer(env, 'VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS', 60_000),
      connectTimeoutMs: integer(env, 'VERDICT_DATA_SOURCE_CONNECT_TIMEOUT_MS', 10_000),
    },
    publicUrl: publicUrlFrom(env),
    uiKeySignIn: flag(env, 'VERDICT_UI_KEY_SIGN_IN', true),
    oidc: oidcFrom(env),
  };
  return { ...config, ...overrides };
}
