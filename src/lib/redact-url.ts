/**
 * The one rule for every log line that carries a URL (the access line, the request serializer):
 * a credential never reaches the log, wherever it sits in the URL and however it is encoded.
 *
 * A component (a path segment, or one `name=value` pair of the query, or a bare `value` with no
 * `=`) is censored whole when, decoded, it holds something that looks like a credential Verdict
 * issues: an API key (`vd_srv_`, `vd_clt_`) or a webhook signing secret (`whsec_`). Decoding is
 * repeated (a double-encoded `vd%255Fsrv%255F` is a key too) and tolerant: a broken escape such as
 * `%zz` stays as it is while every valid one around it is decoded. Values of credential-named
 * parameters (`api_key`, `token`, `password`, ...) are censored whatever they hold.
 */

/**
 * The prefixes of the credentials Verdict issues (api-keys/key-format.ts, workspaces/webhook-secret.ts,
 * webhook-endpoints, and the one-time and share links of people/links.ts).
 */
const ISSUED_CREDENTIAL = /vd_(?:srv|clt|inv|rst|shr)_|whsec_/i;
/** Raw text that may hold one once decoded: most URLs have neither and skip the decoding. */
const MAY_HOLD_CREDENTIAL = /vd|whsec|%/i;
/**
 * Query parameter names whose values are credentials, compared lower-cased without `-`, `_` and
 * a trailing `[...]` (so `API_KEY`, `api-key`, `apiKey` and `key[]` are all `apikey`/`key`).
 */
const SECRET_QUERY_PARAMETERS = new Set([
  'apikey',
  'key',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'secret',
  'clientsecret',
  'auth',
  'authorization',
  'password',
  'signature',
]);
/**
 * Each pass of decoding shortens the text, so it ends; past this many passes a component is
 * censored rather than decoded on (nothing legitimate is encoded that deep, and the bound keeps
 * a hostile URL from costing quadratic time).
 */
const MAX_DECODING_PASSES = 8;
export const CENSOR = '[redacted]';

const ESCAPE = /%([0-9A-Fa-f]{2})/g;

/**
 * Every valid `%XX` escape decoded once, byte by byte (as Latin-1, which keeps the ASCII prefixes
 * searched for intact), broken ones left as they are; `+` read as a space, as in a query.
 */
function decodedOnce(text: string): string {
  return text.replace(ESCAPE, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))).replace(/\+/g, ' ');
}

/** The component decoded until it no longer changes, or null when that takes too many passes. */
function fullyDecoded(text: string): string | null {
  let current = text;
  for (let pass = 0; pass < MAX_DECODING_PASSES; pass += 1) {
    if (!current.includes('%')) return current;
    const next = decodedOnce(current);
    if (next === current) return current;
    current = next;
  }
  return decodedOnce(current) === current ? current : null;
}

/** Whether the raw component holds an issued credential once decoded (or is encoded too deep to tell). */
function holdsCredential(raw: string): boolean {
  if (!MAY_HOLD_CREDENTIAL.test(raw)) return false;
  const decoded = fullyDecoded(raw);
  return decoded === null || ISSUED_CREDENTIAL.test(decoded);
}

function parameterName(name: string): string {
  return (fullyDecoded(name) ?? name)
    .toLowerCase()
    .replace(/\[[^\]]*\]$/, '')
    .replace(/[-_]/g, '');
}

function redactedPath(path: string): string {
  if (!MAY_HOLD_CREDENTIAL.test(path)) return path;
  return path
    .split('/')
    .map((segment) => (holdsCredential(segment) ? CENSOR : segment))
    .join('/');
}

function redactedPair(pair: string): string {
  const equals = pair.indexOf('=');
  // A bare value (`?vd_srv_...`) or a credential used as a parameter name (`?vd_srv_...=1`).
  if (equals === -1) return holdsCredential(pair) ? CENSOR : pair;
  const name = pair.slice(0, equals);
  if (holdsCredential(name)) return CENSOR;
  const value = pair.slice(equals + 1);
  return SECRET_QUERY_PARAMETERS.has(parameterName(name)) || holdsCredential(value) ? `${name}=${CENSOR}` : pair;
}

/** The URL as it may be logged (see the top of this file). */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return redactedPath(url);
  // `;` separates pairs for some parsers: a pair hidden behind one is judged on its own.
  const pairs = url
    .slice(question + 1)
    .split('&')
    .map((pair) => pair.split(';').map(redactedPair).join(';'));
  return `${redactedPath(url.slice(0, question))}?${pairs.join('&')}`;
}
