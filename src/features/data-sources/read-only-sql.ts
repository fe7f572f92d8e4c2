// The parser-level refusal of a fact table's SQL: one SELECT (or WITH ... SELECT), nothing that
// writes, locks or calls a function with side effects. It reads the SQL as tokens (strings,
// quoted identifiers, dollar quotes and comments are skipped), not as a grammar: the real guard
// is the source's own read-only mode (a READ ONLY transaction, readonly=1), which every statement
// Verdict runs there has; this check says early, and clearly, what would fail there or worse.
import type { DataSourceKind } from '../../db/tables/warehouse.js';

interface Token {
  kind: 'word' | 'quoted' | 'symbol';
  text: string;
}

/**
 * Words that only a statement or clause that writes can hold inside one SELECT: a data-modifying
 * CTE (WITH d AS (DELETE ... RETURNING *) SELECT), SELECT ... INTO, and the like. Words that are
 * common column names (comment, set, lock) are left to the source's read-only mode.
 */
const WRITING_WORDS = new Set([
  'insert',
  'update',
  'delete',
  'merge',
  'upsert',
  'into',
  'truncate',
  'drop',
  'alter',
  'create',
  'grant',
  'revoke',
  'copy',
  'call',
  'vacuum',
  'attach',
  'detach',
  'rename',
  'optimize',
  'kill',
  'undrop',
]);

/** Functions with side effects, or that read the server's files or network, by dialect. */
const SIDE_EFFECT_FUNCTIONS: Record<DataSourceKind, RegExp> = {
  postgres:
    /^(nextval|setval|pg_sleep(_for|_until)?|pg_(try_)?advisory_.*|pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile|pg_notify|set_config|lo_.*|dblink.*|pg_read_(binary_)?file|pg_ls_.*|pg_stat_file|pg_stat_reset.*|pg_switch_wal|pg_create_.*|pg_drop_.*|pg_logical_.*|pg_replication_.*|txid_current|pg_current_xact_id|pg_promote|pg_log_backend_memory_contexts|query_to_xml.*|cursor_to_xml.*)$/,
  clickhouse:
    /^(file|url|urlcluster|s3|s3cluster|gcs|hdfs|hdfscluster|azureblobstorage.*|remote|remotesecure|cluster|clusterallreplicas|mysql|postgresql|jdbc|odbc|mongodb|redis|sqlite|executable|executablepool|input|dictionary|dictget.*|sleep|sleepeachrow|throwif|filesystem.*|iceberg.*|deltalake.*|hudi.*)$/,
};

const LOCKING_CLAUSE = /^for (update|share|no key update|key share)\b/;

function skipUntil(sql: string, from: number, closer: string): number {
  const end = sql.indexOf(closer, from);
  return end === -1 ? sql.length : end + closer.length;
}

/** Where a quoted literal or identifier that opens at `start` ends (a doubled quote or a backslash escapes). */
function quotedEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    const char = sql[i];
    if (char === '\\') i += 2;
    else if (char === quote && sql[i + 1] === quote) i += 2;
    else if (char === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}

/** Where a nested block comment that opens at `start` ends. */
function blockCommentEnd(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth += 1;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else i += 1;
  }
  return sql.length;
}

function tokens(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const char = sql[i] as string;
    const dollar = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64));
    if (/\s/.test(char)) i += 1;
    else if (sql.startsWith('--', i)) i = skipUntil(sql, i, '\n');
    else if (sql.startsWith('/*', i)) i = blockCommentEnd(sql, i);
    else if (char === "'") i = quotedEnd(sql, i, "'");
    else if (char === '"' || char === '`') {
      const end = quotedEnd(sql, i, char);
      out.push({ kind: 'quoted', text: sql.slice(i + 1, end - 1).toLowerCase() });
      i = end;
    } else if (dollar) i = skipUntil(sql, i + dollar[0].length, dollar[0]);
    else if (/[A-Za-z_]/.test(char)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i))?.[0] ?? char;
      out.push({ kind: 'word', text: word.toLowerCase() });
      i += word.length;
    } else {
      out.push({ kind: 'symbol', text: char });
      i += 1;
    }
  }
  return out;
}

/** The SQL without trailing semicolons and blanks, as it is wrapped in a subquery. */
export function trimmedSql(sql: string): string {
  return sql.replace(/[\s;]+$/, '');
}

/** Why the tokens write, lock or call a function with side effects, or null. */
function sideEffectDefect(kind: DataSourceKind, list: Token[]): string | null {
  const words = list.filter((token) => token.kind === 'word').map((token) => token.text);
  for (const [index, word] of words.entries()) {
    if (word === 'for' && LOCKING_CLAUSE.test(words.slice(index, index + 4).join(' '))) return 'may not lock rows (FOR UPDATE / FOR SHARE): Verdict only reads';
    if (WRITING_WORDS.has(word)) return `may not contain ${word.toUpperCase()}: a fact table only reads`;
  }
  for (const [index, token] of list.entries()) {
    const called = list[index + 1]?.text === '(' && token.kind !== 'symbol';
    if (called && SIDE_EFFECT_FUNCTIONS[kind].test(token.text))
      return `may not call ${token.text}(): it has side effects, or reads the server’s files or network`;
  }
  return null;
}

/** Why the SQL is not one read-only SELECT (for the dialect), or null when it may be one. */
export function readOnlySelectDefect(kind: DataSourceKind, sql: string): string | null {
  const list = tokens(trimmedSql(sql));
  const first = list.find((token) => token.text !== '(');
  if (!first) return 'is empty: a fact table is one SELECT';
  if (list.some((token) => token.kind === 'symbol' && token.text === ';'))
    return 'must be one statement: a fact table is one SELECT, without ";" between statements';
  if (first.kind !== 'word' || (first.text !== 'select' && first.text !== 'with'))
    return `must be a SELECT (or WITH ... SELECT), not ${first.text.toUpperCase()}`;
  return sideEffectDefect(kind, list);
}

/**
 * Why a boolean expression (a metric's row filter, placed in a WHERE over the fact table) cannot
 * be one: a ";", a parenthesis it closes without opening (which would end the WHERE), or what a
 * fact table may not hold either; null when it may be one.
 */
export function readOnlyExpressionDefect(kind: DataSourceKind, expression: string): string | null {
  const list = tokens(expression);
  if (list.length === 0) return 'is empty';
  let depth = 0;
  for (const token of list) {
    if (token.kind !== 'symbol') continue;
    if (token.text === ';') return 'must be one expression, without ";"';
    if (token.text === '(') depth += 1;
    if (token.text === ')') depth -= 1;
    if (depth < 0) return 'closes a parenthesis it did not open';
  }
  if (depth !== 0) return 'leaves a parenthesis open';
  return sideEffectDefect(kind, list);
}
