/**
 * `property_path`: which event property holds the number a sum or mean metric aggregates. A
 * restricted JSON-path subset that always names exactly one value: dot chains and bracketed
 * string keys, optionally rooted at `$` (`amount`, `order.total`, `$.order.total`,
 * `order["total value"]`, `items['sku']`). Anything that could select several values or run code
 * (recursive descent, wildcards, filters, indexes, slices) is refused when the metric is saved,
 * so the analysis never meets it.
 */

export const MAX_PROPERTY_PATH_LENGTH = 256;
/** Event `properties` nest at most 8 levels deep, so a longer path could never resolve. */
export const MAX_PROPERTY_PATH_KEYS = 8;

export class PropertyPathError extends Error {
  override readonly name = 'PropertyPathError';
}

const NAME_CHAR = /[A-Za-z0-9_-]/;
const QUOTES = new Set(["'", '"']);

/** A cursor over the path text that reports problems by 1-based character position. */
class Scanner {
  position = 0;
  constructor(readonly text: string) {}

  /** A method, not a getter: TypeScript would otherwise keep a narrowing across position moves. */
  current(): string | undefined {
    return this.text[this.position];
  }

  get done(): boolean {
    return this.position >= this.text.length;
  }

  fail(message: string, at = this.position): never {
    throw new PropertyPathError(`${message} (at character ${at + 1})`);
  }
}

/**
 * The keys the path walks, outermost first: `$.order["total value"]` gives
 * `['order', 'total value']`. Throws PropertyPathError with a message fit for a 422 otherwise.
 * Callers reading event properties must look the keys up as own properties of plain objects
 * (Object.hasOwn), so `constructor` or `__proto__` never reach built-ins.
 */
export function parsePropertyPath(path: string): string[] {
  if (path.length === 0) throw new PropertyPathError('is empty; name a property, e.g. amount or order.total');
  if (path.length > MAX_PROPERTY_PATH_LENGTH) throw new PropertyPathError(`is longer than ${MAX_PROPERTY_PATH_LENGTH} characters`);
  const scanner = new Scanner(path);
  const keys: string[] = [];
  if (scanner.current() === '$') {
    scanner.position += 1;
    if (scanner.done) scanner.fail("'$' alone is the whole properties object; name a property, e.g. $.amount", 0);
    const next = scanner.current();
    if (next !== '.' && next !== '[') scanner.fail("after '$' comes .name or ['name']");
  } else if (scanner.current() === '.') {
    scanner.fail("must not start with '.'; write amount or $.amount");
  } else if (scanner.current() !== '[') {
    keys.push(readName(scanner));
  }
  while (!scanner.done) {
    keys.push(readStep(scanner));
    if (keys.length > MAX_PROPERTY_PATH_KEYS) {
      throw new PropertyPathError(`has more than ${MAX_PROPERTY_PATH_KEYS} keys; event properties nest at most ${MAX_PROPERTY_PATH_KEYS} levels`);
    }
  }
  return keys;
}

/** The message parsePropertyPath would throw, or null when the path is valid. */
export function propertyPathProblem(path: string): string | null {
  try {
    parsePropertyPath(path);
    return null;
  } catch (error) {
    if (error instanceof PropertyPathError) return error.message;
    throw error;
  }
}

function readStep(scanner: Scanner): string {
  const char = scanner.current();
  if (char === '.') {
    scanner.position += 1;
    if (scanner.current() === '.') scanner.fail('recursive descent (..) is not supported; spell out the path', scanner.position - 1);
    return readName(scanner);
  }
  if (char === '[') return readBracket(scanner);
  if (char === '*') scanner.fail('wildcards (*) are not supported; a metric reads one value per event');
  return scanner.fail(`unexpected '${char}'; keys with characters other than letters, digits, _ and - go in brackets: ['my key']`);
}

function readName(scanner: Scanner): string {
  const start = scanner.position;
  while (!scanner.done && NAME_CHAR.test(scanner.current() ?? '')) scanner.position += 1;
  if (scanner.position > start) return scanner.text.slice(start, scanner.position);
  if (scanner.current() === '*') scanner.fail('wildcards (*) are not supported; a metric reads one value per event');
  if (scanner.done) scanner.fail('ends where a property name was expected');
  return scanner.fail(`expected a property name, found '${scanner.current()}'; put unusual keys in brackets: ['my key']`);
}

function readBracket(scanner: Scanner): string {
  const open = scanner.position;
  scanner.position += 1;
  const char = scanner.current() ?? '';
  if (QUOTES.has(char)) {
    const key = readQuoted(scanner, char);
    if (scanner.current() !== ']') scanner.fail("expected ']' after the quoted key");
    scanner.position += 1;
    if (key.length === 0) scanner.fail('a bracketed key must not be empty', open);
    return key;
  }
  if (char === '?') scanner.fail('filters ([?(...)]) are not supported', open);
  if (char === '(') scanner.fail('script expressions ([(...)]) are not supported', open);
  if (char === '*') scanner.fail('wildcards ([*]) are not supported; a metric reads one value per event', open);
  if (/[-\d:]/.test(char)) scanner.fail("array indexes and slices are not supported; only quoted keys go in brackets: ['name']", open);
  return scanner.fail(`expected a quoted key after '[', e.g. ['total value']`, open);
}

/** A single- or double-quoted key; a backslash escapes the next character (quote or backslash). */
function readQuoted(scanner: Scanner, quote: string): string {
  const start = scanner.position;
  scanner.position += 1;
  let key = '';
  while (!scanner.done) {
    const char = scanner.current() ?? '';
    if (char === quote) {
      scanner.position += 1;
      return key;
    }
    if (char === '\\') {
      const next = scanner.text[scanner.position + 1];
      if (next !== quote && next !== '\\') scanner.fail(`only \\${quote} and \\\\ may be escaped inside a quoted key`);
      key += next;
      scanner.position += 2;
      continue;
    }
    key += char;
    scanner.position += 1;
  }
  return scanner.fail(`the quoted key is not closed with ${quote}`, start);
}
