/**
 * Compares what a docs block printed with the response the page shows for it.
 *
 * A shown response may elide with `…` (an object's other fields, an array's other items, the rest
 * of a string). Ids (ULIDs), timestamps, keys, secrets and cursors differ from run to run and are
 * compared by shape only; everything else (statuses, problem types and details, variants,
 * reasons, counts) must be equal. The printed output may hold more than the page shows: each
 * shown value must match a printed value, in order.
 */
const ELIDED = '__docs_test_elided__';

type Piece = { kind: 'json'; value: unknown; source: string } | { kind: 'text'; line: string };

/** Splits text into top-level JSON-looking segments and the text lines between them. */
function segments(text: string): { json: boolean; text: string }[] {
  const out: { json: boolean; text: string }[] = [];
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') {
      plain += c;
      continue;
    }
    const end = balancedEnd(text, i);
    if (end < 0) {
      plain += c;
      continue;
    }
    out.push({ json: false, text: plain });
    plain = '';
    out.push({ json: true, text: text.slice(i, end + 1) });
    i = end;
  }
  out.push({ json: false, text: plain });
  return out;
}

function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Parses JSON in which a bare `…` stands for elided object fields or array items. */
export function parseElided(text: string): unknown {
  let out = '';
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '{' || c === '[') stack.push(c);
    if (c === '}' || c === ']') stack.pop();
    if (c === '…') out += stack.at(-1) === '{' ? `"${ELIDED}": 0` : `"${ELIDED}"`;
    else out += c;
  }
  return JSON.parse(out);
}

function pieces(text: string, parse: (s: string) => unknown): Piece[] {
  const result: Piece[] = [];
  for (const segment of segments(text)) {
    if (segment.json) {
      try {
        result.push({ kind: 'json', value: parse(segment.text), source: segment.text });
        continue;
      } catch {
        // not JSON after all: compare it as text
      }
    }
    for (const line of segment.text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed && trimmed !== '…' && !trimmed.startsWith('#')) result.push({ kind: 'text', line: trimmed });
    }
  }
  return result;
}

function normalise(s: string): string {
  return s
    .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, '<id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\bvd_(srv|clt)_[A-Za-z0-9._-]+/g, 'vd_$1_<key>')
    .replace(/\bwhsec_[A-Za-z0-9]+/g, 'whsec_<secret>')
    .replace(/^eyJ[A-Za-z0-9_-]+$/, '<cursor>');
}

/** Why `actual` does not match `expected`, or null when it does. */
export function mismatch(expected: unknown, actual: unknown, path = ''): string | null {
  if (expected === ELIDED) return null;
  if (typeof expected === 'string') {
    if (typeof actual !== 'string') return `${path || '/'}: expected a string, got ${JSON.stringify(actual)}`;
    const [want, got] = [normalise(expected), normalise(actual)];
    const ok = want.includes('…') ? got.startsWith(want.slice(0, want.indexOf('…'))) : want === got;
    return ok ? null : `${path || '/'}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path || '/'}: expected an array, got ${JSON.stringify(actual)}`;
    return arrayMismatch(expected, actual, path);
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path || '/'}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      if (key === ELIDED) continue;
      if (!(key in actual)) return `${path}/${key}: missing`;
      const why = mismatch(value, (actual as Record<string, unknown>)[key], `${path}/${key}`);
      if (why) return why;
    }
    return null;
  }
  return Object.is(expected, actual) ? null : `${path || '/'}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

function arrayMismatch(expected: unknown[], actual: unknown[], path: string): string | null {
  const items = expected.filter((item) => item !== ELIDED);
  if (items.length === expected.length) {
    if (actual.length !== expected.length) return `${path || '/'}: expected ${expected.length} items, got ${actual.length}`;
    for (let i = 0; i < items.length; i++) {
      const why = mismatch(items[i], actual[i], `${path}/${i}`);
      if (why) return why;
    }
    return null;
  }
  let at = 0;
  for (const item of items) {
    while (at < actual.length && mismatch(item, actual[at], path) !== null) at++;
    if (at === actual.length) return `${path || '/'}: no item matches ${JSON.stringify(item)}`;
    at++;
  }
  return null;
}

/** Every shown piece must match a printed piece, in order; returns the first that does not. */
export function compareShown(shown: string, printed: string): string | null {
  const want = pieces(shown, parseElided);
  const got = pieces(printed, JSON.parse);
  const gotJson = got.filter((p) => p.kind === 'json');
  const gotText = got.filter((p): p is Extract<Piece, { kind: 'text' }> => p.kind === 'text').map((p) => normalise(p.line));
  let jsonAt = 0;
  let textAt = 0;
  for (const piece of want) {
    if (piece.kind === 'text') {
      const line = normalise(piece.line);
      while (textAt < gotText.length && !gotText[textAt]?.includes(line)) textAt++;
      if (textAt === gotText.length) return `the shown line ${JSON.stringify(piece.line)} was not printed`;
      textAt++;
      continue;
    }
    let closest: string | null = null;
    const from = jsonAt;
    while (jsonAt < gotJson.length) {
      const why = mismatch(piece.value, (gotJson[jsonAt] as { value: unknown }).value);
      if (!why) break;
      closest ??= why;
      jsonAt++;
    }
    if (jsonAt === gotJson.length) {
      const printedCount = gotJson.length - from;
      return `the shown response ${piece.source.replace(/\s+/g, ' ').slice(0, 160)} matches nothing printed (${printedCount} JSON value(s) after the previous match${closest ? `; first difference ${closest}` : ''})`;
    }
    jsonAt++;
  }
  return null;
}

/** The whole-line JSON comments of a shell block (`# {"variant":"control"}`), as a shown text. */
export function commentedResponses(code: string): string {
  return code
    .split('\n')
    .map((line) => /^\s*#\s*(\{.*\}|\[.*\])\s*$/.exec(line)?.[1])
    .filter((json): json is string => json !== undefined)
    .join('\n');
}
