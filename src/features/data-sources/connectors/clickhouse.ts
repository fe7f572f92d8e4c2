// A ClickHouse source: a server over HTTP(S), or the engine embedded in this process (chdb:PATH,
// for tests and trials). Every statement carries readonly=1 (no writes, no setting changes) and
// max_execution_time; connections to a server go through the network rule's lookup.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { openClickHouse } from '../../../clickhouse/client.js';
import { guardedAgent, permittedAddress } from '../network.js';
import { CHDB_PREFIX, isEmbedded, scrubbed } from '../source-url.js';
import { SourceError, type QueryParams, type SourceSession } from './errors.js';
import type { SessionLimits } from './postgres.js';

/** Error types that mean "no usable connection" rather than "bad SQL". */
const CONNECTION_FAILURES = new Set(['AUTHENTICATION_FAILED', 'REQUIRED_PASSWORD', 'UNKNOWN_USER', 'UNKNOWN_DATABASE', 'IP_ADDRESS_NOT_ALLOWED']);
const TIMEOUTS = new Set(['TIMEOUT_EXCEEDED', 'TOO_SLOW']);

// The embedded engine binds one directory per process and keeps a session's settings between
// statements; its clients are kept open, one per directory, for the life of the process.
const embedded = new Map<string, Promise<ClickHouseClient>>();

function embeddedClient(path: string): Promise<ClickHouseClient> {
  let client = embedded.get(path);
  if (!client) {
    client = openClickHouse({ kind: 'embedded', path, cluster: null }).then((opened) => opened.client);
    embedded.set(path, client);
    client.catch(() => embedded.delete(path));
  }
  return client;
}

function sourceErrorOf(error: unknown, url: string, timeoutMs: number): SourceError {
  if (error instanceof SourceError) return error;
  const type = (error as { type?: string }).type ?? '';
  const code = (error as { code?: string }).code ?? '';
  const message = scrubbed((error as Error).message ?? String(error), url);
  if (TIMEOUTS.has(type))
    return new SourceError('timeout', `the query ran longer than ${timeoutMs} ms (VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS) and was stopped`);
  if (CONNECTION_FAILURES.has(type)) return new SourceError('unreachable', `the source refused the connection (${type})`);
  if (error instanceof Error && error.name === 'DeliveryRefusal')
    return new SourceError('refused', `${message}: refused unless VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1`);
  if (type !== '' || code === 'CHDB_QUERY') return new SourceError('query', message);
  return new SourceError('unreachable', `could not connect: ${/^E[A-Z]+$/.test(code) ? code : message}`);
}

/** Opens a client for the source; the caller closes the session. */
export async function openClickHouseSource(url: string, limits: SessionLimits): Promise<SourceSession> {
  const fail = (error: unknown) => sourceErrorOf(error, url, limits.statementTimeoutMs);
  let client: ClickHouseClient;
  let close: () => Promise<void>;
  if (isEmbedded(url)) {
    // The engine runs inside Verdict's process, with its files and its network: a local source.
    if (!limits.allowPrivateNetworks)
      throw new SourceError('refused', 'the embedded engine (chdb:) runs on this machine: refused unless VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1');
    client = await embeddedClient(url.slice(CHDB_PREFIX.length)).catch((error: unknown) => {
      throw new SourceError('unreachable', (error as Error).message);
    });
    close = async () => undefined;
  } else {
    // An IP literal never reaches the agent's lookup: it is checked here; a name is checked by both.
    await permittedAddress(new URL(url).hostname, limits);
    client = createClient({
      url,
      http_agent: guardedAgent(new URL(url).protocol, limits),
      keep_alive: { enabled: false },
      request_timeout: limits.statementTimeoutMs + limits.connectTimeoutMs,
      log: { level: ClickHouseLogLevel.OFF },
    });
    close = () => client.close();
  }
  // The order matters: under readonly=1 no later setting may change (the embedded engine keeps
  // them for the session, so every statement sends the same values).
  const settings = { max_execution_time: limits.statementTimeoutMs / 1000, readonly: '1' } as const;
  const rows = async <Row extends Record<string, unknown>>(query: string, params?: QueryParams): Promise<Row[]> => {
    try {
      const query_params = params && !Array.isArray(params) ? params : undefined;
      const result = await client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings, ...(query_params ? { query_params } : {}) });
      return await result.json<Row>();
    } catch (error) {
      throw fail(error);
    }
  };
  return {
    version: async () => String((await rows<{ version: string }>('SELECT version() AS version'))[0]?.version ?? ''),
    describe: async (sql) => (await rows<{ name: string; type: string }>(`DESCRIBE (${sql}\n)`)).map(({ name, type }) => ({ name, type })),
    rows,
    close,
  };
}
