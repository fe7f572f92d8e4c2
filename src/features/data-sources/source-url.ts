// A data source's URL carries its credentials: it is checked here once, at the API's edge, stored
// sealed, and shown in full only in the answer to the request that sent it. Everywhere else it is
// masked: scheme, user, host, port and database, never the password or the query string. No
// message built here quotes the URL or any part of its query, so a refused one never reaches a
// response, the log or the audit log.
import type { DataSourceKind } from '../../db/tables/warehouse.js';

/** The PostgreSQL URL parameters Verdict reads; any other (host=, sslcert=, options=...) is refused. */
export const POSTGRES_PARAMETERS = ['sslmode', 'application_name'] as const;
export const SSL_MODES = ['disable', 'prefer', 'require', 'no-verify', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The embedded ClickHouse engine (npm chdb) at a local directory: tests, and single-machine trials. */
export const CHDB_PREFIX = 'chdb:';

function parsed(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function postgresDefect(url: URL): string | null {
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return 'must be a postgres:// or postgresql:// URL for a PostgreSQL source';
  if (url.hostname === '') return 'must name a host (a Unix socket is not a data source)';
  if (url.pathname.length <= 1) return 'must name a database (postgres://user:password@host:5432/database)';
  for (const name of url.searchParams.keys()) {
    if (!(POSTGRES_PARAMETERS as readonly string[]).includes(name)) return `may only carry the parameters ${POSTGRES_PARAMETERS.join(' and ')}`;
  }
  const mode = url.searchParams.get('sslmode');
  if (mode !== null && !(SSL_MODES as readonly string[]).includes(mode)) return `sslmode must be one of ${SSL_MODES.join(', ')}`;
  return null;
}

function clickhouseDefect(text: string, url: URL | null): string | null {
  if (text.startsWith(CHDB_PREFIX)) return text.length > CHDB_PREFIX.length ? null : 'chdb: must be followed by a directory';
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return 'must be an http(s)://user:password@host:8123/database URL for a ClickHouse source (or chdb:PATH, the embedded engine)';
  }
  if (url.hostname === '') return 'must name a host';
  if (url.search !== '') return 'may not carry query parameters (settings are Verdict’s: readonly=1 and max_execution_time)';
  return null;
}

/** Why the URL cannot be a source of this kind (never quoting it), or null when it can. */
export function sourceUrlDefect(kind: DataSourceKind, text: string): string | null {
  const url = parsed(text);
  if (kind === 'clickhouse') return clickhouseDefect(text, url);
  if (!url) return 'is not a valid URL';
  if (url.port === '0') return 'must have a port from 1 to 65535';
  return postgresDefect(url);
}

/** Whether the source is the engine embedded in this process rather than a server. */
export function isEmbedded(text: string): boolean {
  return text.startsWith(CHDB_PREFIX);
}

/** What the API, the audit log and the admin UI show of a source's URL. */
export function maskSourceUrl(text: string): string {
  if (isEmbedded(text)) return text;
  const url = parsed(text);
  if (!url) return '…';
  const user = url.username === '' ? '' : `${url.username}${url.password === '' ? '' : ':…'}@`;
  return `${url.protocol}//${user}${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

/** The message with every piece of the URL that could be a credential cut out (a driver may quote what it was given). */
export function scrubbed(message: string, text: string): string {
  const url = parsed(text);
  const secrets = [text, url?.password, url ? decodeURIComponent(url.password) : '', url?.search].filter((part): part is string => !!part && part.length >= 3);
  return secrets.reduce((out, secret) => out.split(secret).join('…'), message);
}
