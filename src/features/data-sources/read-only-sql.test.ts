import { describe, expect, it } from 'vitest';
import { readOnlyExpressionDefect, readOnlySelectDefect } from './read-only-sql.js';

describe('the parser-level refusal of a fact table’s SQL', () => {
  it.each([
    ['a plain SELECT', "SELECT user_id, created_at, amount FROM orders WHERE status = 'paid'"],
    ['a trailing semicolon', 'SELECT 1 AS a;  \n'],
    ['WITH ... SELECT', 'WITH paid AS (SELECT * FROM orders) SELECT * FROM paid'],
    ['a parenthesised SELECT', '(SELECT 1 AS a)'],
    ['a semicolon and keywords inside a string', "SELECT 'a; DELETE FROM t' AS note FROM orders"],
    ['a semicolon inside a comment', 'SELECT 1 AS a -- one; two\n FROM orders /* ; DROP TABLE x */'],
    ['a dollar-quoted string', 'SELECT $tag$ ; DELETE $tag$ AS note'],
    ['words that contain a refused one', 'SELECT updated_at, inserted_by, deleted FROM orders'],
    ['a quoted identifier named like a keyword', 'SELECT "update" FROM orders'],
  ])('accepts %s', (_what, sql) => {
    expect(readOnlySelectDefect('postgres', sql)).toBeNull();
  });

  it.each([
    ['an empty text', '  ;  ', /empty/],
    ['a DELETE', 'DELETE FROM orders', /must be a SELECT/],
    ['two statements', 'SELECT 1; SELECT 2', /one statement/],
    ['FOR UPDATE', 'SELECT * FROM orders FOR UPDATE', /lock rows/],
    ['FOR NO KEY UPDATE', 'SELECT * FROM orders FOR NO KEY UPDATE SKIP LOCKED', /lock rows/],
    ['a data-modifying WITH', 'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d', /DELETE/],
    ['SELECT INTO', 'SELECT * INTO copy FROM orders', /INTO/],
    ['nextval', "SELECT nextval('s') AS n", /nextval/],
    ['a schema-qualified setval', "SELECT pg_catalog.setval('s', 1) AS n", /setval/],
    ['a quoted function name', `SELECT "nextval"('s') AS n`, /nextval/],
    ['pg_sleep', 'SELECT pg_sleep (1)', /pg_sleep/],
    ['an advisory lock', 'SELECT pg_advisory_lock(1)', /pg_advisory_lock/],
  ])('refuses %s', (_what, sql, message) => {
    expect(readOnlySelectDefect('postgres', sql)).toMatch(message);
  });

  it('refuses ClickHouse table functions that reach files or the network, and not the same names as columns', () => {
    expect(readOnlySelectDefect('clickhouse', "SELECT * FROM url('http://169.254.169.254/', 'CSV', 'x String')")).toMatch(/url/);
    expect(readOnlySelectDefect('clickhouse', "SELECT * FROM file('/etc/passwd', 'CSV', 'x String')")).toMatch(/file/);
    expect(readOnlySelectDefect('clickhouse', 'SELECT url, file FROM pages')).toBeNull();
    expect(readOnlySelectDefect('postgres', "SELECT * FROM url('x')")).toBeNull();
  });
});

describe('the parser-level refusal of a metric’s row filter', () => {
  it('accepts a boolean expression, strings and nested parentheses included', () => {
    expect(readOnlyExpressionDefect('postgres', "event_key = 'purchase' AND (amount > 0 OR note = ')')")).toBeNull();
  });
  it.each([
    ['an empty one', ' ', /empty/],
    ['a semicolon', 'a = 1; DELETE FROM orders', /";"/],
    ['a parenthesis closed early, which would end the WHERE', '1 = 1) UNION SELECT (1', /closes a parenthesis/],
    ['an open parenthesis', '(a = 1', /open/],
    ['a side effect', "nextval('s') > 0", /nextval/],
  ])('refuses %s', (_what, expression, message) => {
    expect(readOnlyExpressionDefect('postgres', expression)).toMatch(message);
  });
});
