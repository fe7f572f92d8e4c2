/**
 * The properties text ClickHouse stores for an event (issue #34). ClickHouse's JSON functions
 * (simdjson) reject a whole text holding an integer literal outside UInt64 and Int64, so no number
 * would be read at any path of that event, where SQLite and PostgreSQL read every one (the big one
 * as a Float64). The API writes such literals for 2^64 <= |n| < 1e21 (JSON.stringify writes 1e21
 * and above in exponent form); ClickHouse reads exponent forms as a Double. So the drain stores
 * those literals in the shortest exponent form that round-trips to the same double
 * (`toExponential()`), and every other byte of the text as it was: strings (digits in them too),
 * keys, their order and duplicates, nesting, every other number. The SQL stores keep the original.
 */

/**
 * A run of digits that may be out of range: UInt64 has at most 20 digits (18446744073709551615),
 * Int64's minimum 19 (-9223372036854775808). Anything shorter is in range, so an event without such
 * a run (nearly all) costs one scan of the regex and is returned as it is.
 */
const MAYBE_OUT_OF_RANGE = /\d{20}|-\d{19}/;

/** A JSON string (left as it is) or a number, in a valid JSON text: outside strings only numbers have digits. */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\[\s\S])*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

const UINT64_MAX = 2n ** 64n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Whether a JSON number token is an integer literal simdjson rejects (outside both Int64 and UInt64). */
function outOfRangeInteger(token: string): boolean {
  if (!/^-?\d{19,}$/.test(token)) return false;
  const value = BigInt(token);
  return value > UINT64_MAX || value < INT64_MIN;
}

/** `token` as ClickHouse must store it: an out-of-range integer literal in exponent form (the same double), else as it is. */
function storedNumber(token: string): string {
  if (!outOfRangeInteger(token)) return token;
  const value = Number(token);
  // Beyond 1.8e308 there is no double to write (JSON.stringify never writes such a literal): left as it is.
  return Number.isFinite(value) ? value.toExponential() : token;
}

/** The properties text to store in ClickHouse: `text` itself unless it holds an integer literal beyond 64 bits. */
export function clickhouseJsonText(text: string): string {
  if (!MAYBE_OUT_OF_RANGE.test(text)) return text;
  return text.replace(STRING_OR_NUMBER, (token) => (token.startsWith('"') ? token : storedNumber(token)));
}
