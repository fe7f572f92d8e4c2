// A PostgreSQL source. Every statement runs in its own READ ONLY transaction with a
// statement_timeout (SET LOCAL), rolled back afterwards: nothing Verdict sends can change the
// source, whatever the SQL says (a data-modifying CTE, nextval, SELECT INTO all fail there).
// The connection goes to the address the network rule checked, not to the name again.
import pg from 'pg';
import { permittedAddress, type NetworkPolicy } from '../network.js';
import { scrubbed, type SslMode } from '../source-url.js';
import { SourceError, type DescribedColumn, type QueryParams, type SourceSession } from './errors.js';

export interface SessionLimits extends NetworkPolicy {
  statementTimeoutMs: number;
}

/** SQLSTATE classes and codes that mean "no usable connection" rather than "bad SQL". */
const CONNECTION_FAILURES = new Map<string, string>([
  ['28P01', 'the source refused the user name or password'],
  ['28000', 'the source refused the user name or password'],
  ['3D000', 'the source has no such database'],
  ['53300', 'the source has too many connections'],
  ['57P03', 'the source is starting up or shutting down'],
]);
const QUERY_CANCELED = '57014';

function sslOf(mode: string | null, host: string): pg.ClientConfig['ssl'] {
  switch (mode as SslMode | null) {
    case null:
    case 'disable':
      return false;
    case 'verify-full':
      return { rejectUnauthorized: true, servername: host };
    default:
      return { rejectUnauthorized: false, servername: host };
  }
}

function sourceErrorOf(error: unknown, url: string, timeoutMs: number): SourceError {
  if (error instanceof SourceError) return error;
  const code = (error as { code?: string }).code ?? '';
  const message = scrubbed((error as Error).message ?? String(error), url);
  if (code === QUERY_CANCELED)
    return new SourceError('timeout', `the query ran longer than ${timeoutMs} ms (VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS) and was stopped`);
  const failure = CONNECTION_FAILURES.get(code);
  if (failure) return new SourceError('unreachable', failure);
  if (/^[0-9A-Z]{5}$/.test(code)) return new SourceError('query', message);
  return new SourceError('unreachable', `could not connect: ${code || message}`);
}

/** Opens one connection; the caller closes the session. */
export async function openPostgres(urlText: string, limits: SessionLimits): Promise<SourceSession> {
  const url = new URL(urlText);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = await permittedAddress(host, limits);
  const client = new pg.Client({
    host: address,
    port: url.port === '' ? 5432 : Number(url.port),
    user: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
    database: decodeURIComponent(url.pathname.slice(1)),
    ssl: sslOf(url.searchParams.get('sslmode'), host),
    application_name: url.searchParams.get('application_name') ?? 'verdict',
    connectionTimeoutMillis: limits.connectTimeoutMs,
  });
  // A connection the server drops while idle must not crash the process; the next query fails instead.
  client.on('error', () => undefined);
  const fail = (error: unknown) => sourceErrorOf(error, urlText, limits.statementTimeoutMs);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw fail(error);
  }

  async function readOnly<T>(work: () => Promise<T>): Promise<T> {
    try {
      await client.query('BEGIN TRANSACTION READ ONLY');
      await client.query(`SET LOCAL statement_timeout = ${Math.trunc(limits.statementTimeoutMs)}`);
      return await work();
    } catch (error) {
      throw fail(error);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
  }

  return {
    version: () => readOnly(async () => String((await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '')),
    describe: (sql) =>
      readOnly(async () => {
        const result = await client.query(`SELECT * FROM (${sql}\n) AS verdict_fact LIMIT 0`);
        const oids = [...new Set(result.fields.map((field) => field.dataTypeID))];
        const types = await client.query<{ oid: number; name: string }>(
          'SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_type WHERE oid = ANY($1::oid[])',
          [oids],
        );
        const names = new Map(types.rows.map((row) => [row.oid, row.name]));
        return result.fields.map((field): DescribedColumn => ({ name: field.name, type: names.get(field.dataTypeID) ?? 'unknown' }));
      }),
    rows: <Row extends Record<string, unknown>>(sql: string, params?: QueryParams) =>
      readOnly(async () => (await client.query<Row>(sql, Array.isArray(params) ? params : undefined)).rows),
    close: () => client.end().catch(() => undefined),
  };
}
