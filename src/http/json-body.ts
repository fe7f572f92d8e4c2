import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyInstance } from 'fastify';
import { problems, type FieldError, type Problem } from './problems.js';

/**
 * How deeply objects and arrays may nest in a request body; the top-level value is depth 1.
 * Legitimate bodies stay far below it (event properties allow 8, an audience about 22), while
 * recursive code (JSON.stringify, validators, templates) overflows the stack some thousands deep.
 */
export const MAX_JSON_DEPTH = 128;

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string;
  /** Set on a frame that stands for a defect found while scanning its parent. */
  found: string | undefined;
}

function escapePointerKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerOf(frame: Frame): string {
  const keys: string[] = [];
  for (let at: Frame | null = frame; at?.parent; at = at.parent) keys.push(escapePointerKey(at.key));
  return keys
    .reverse()
    .map((key) => `/${key}`)
    .join('');
}

interface Defect {
  pointer: string;
  message: string;
}

const TOO_DEEP = `nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`;
const NOT_FINITE = 'must be a finite number (JSON numbers beyond ±1.8e308 overflow to Infinity)';
const LONE_SURROGATE = 'contains a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which is not text';
const KEY_LONE_SURROGATE = 'has a key with a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which is not text';
// PostgreSQL text and jsonb cannot hold U+0000; refused on every database so both behave alike.
const NUL = 'contains U+0000 (NUL), which is not stored';
const KEY_NUL = 'has a key containing U+0000 (NUL), which is not stored';

/** Node 20 has String.prototype.isWellFormed (ES2024); the compiler's lib predates it. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** Which kinds of defect to look for: the text a value came from may rule some out (mayHold). */
export interface DefectChecks {
  numbers: boolean;
  strings: boolean;
}

const ALL_CHECKS: DefectChecks = { numbers: true, strings: true };

/** What is wrong with a number or a string, or null (containers are judged by their depth). */
function scalarDefect(value: unknown, checks: DefectChecks): string | null {
  if (typeof value === 'number') return checks.numbers && !Number.isFinite(value) ? NOT_FINITE : null;
  if (typeof value === 'string' && checks.strings) return !isWellFormed(value) ? LONE_SURROGATE : value.includes('\u0000') ? NUL : null;
  return null;
}

function keyDefect(key: string, checks: DefectChecks): string | null {
  if (!checks.strings) return null;
  return !isWellFormed(key) ? KEY_LONE_SURROGATE : key.includes('\u0000') ? KEY_NUL : null;
}

/**
 * The children of one container that still need a visit, in document order: its containers, up
 * to and including a frame for its first scalar or key defect (whose earlier siblings may hold
 * one deeper down, so they are visited first).
 */
function childFrames(frame: Frame, checks: DefectChecks): Frame[] {
  const frames: Frame[] = [];
  const depth = frame.depth + 1;
  const isList = Array.isArray(frame.value);
  const container = frame.value as Record<string, unknown>;
  const keys = isList ? null : Object.keys(container);
  const count = keys === null ? (frame.value as unknown[]).length : keys.length;
  for (let index = 0; index < count; index++) {
    const key = keys === null ? index : (keys[index] as string);
    const child = container[key];
    const found = (keys === null ? null : keyDefect(key as string, checks)) ?? scalarDefect(child, checks);
    if (found !== null) {
      frames.push({ value: child, depth, parent: frame, key: String(key), found });
      break;
    }
    if (typeof child === 'object' && child !== null) frames.push({ value: child, depth, parent: frame, key: String(key), found: undefined });
  }
  return frames;
}

/**
 * The first value of a parsed body, in document order, that the API refuses whatever the route:
 * an object or array nested deeper than `limit`, a number that overflowed to ±Infinity, or a
 * string (value or key) holding a lone surrogate or U+0000. It walks with its own stack, not by
 * recursion, so a hostile body cannot overflow the call stack here; scalars get no frame of their
 * own, which keeps the walk cheap on large event batches.
 */
export function firstJsonDefect(value: unknown, limit = MAX_JSON_DEPTH, checks: DefectChecks = ALL_CHECKS): Defect | null {
  const scalar = scalarDefect(value, checks);
  if (scalar !== null) return { pointer: '', message: scalar };
  if (typeof value !== 'object' || value === null) return null;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: '', found: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.found !== undefined) return { pointer: pointerOf(frame), message: frame.found };
    if (frame.depth > limit) return { pointer: pointerOf(frame), message: TOO_DEEP };
    const children = childFrames(frame, checks);
    // Pushed last to first, so they are visited in document order.
    for (let index = children.length - 1; index >= 0; index--) stack.push(children[index] as Frame);
  }
  return null;
}

/** The JSON Pointer of the first object or array nested deeper than `limit`, or null. */
export function pointerBeyondDepth(value: unknown, limit = MAX_JSON_DEPTH): string | null {
  const defect = firstJsonDefect(value, limit);
  return defect?.message === TOO_DEEP ? defect.pointer : null;
}

// Which texts can hold a defect at all, so most bodies skip the walk. A number of d integer
// digits and exponent e overflows only when d + e > 308: a 3-digit exponent or 210+ digits; a lone surrogate in valid UTF-8 can only be a \u escape of D800-DFFF,
// and U+0000 only \u0000 (JSON text cannot hold it raw).
const MAY_OVERFLOW = /[eE]\+?\d{3}|\d{210}/;
const MAY_HOLD_SURROGATE_OR_NUL = /\\u(?:[dD][89a-fA-F]|0000)/;

/** The walk a text needs: none (null), or the checks its characters leave possible. */
function checksFor(text: string): DefectChecks | null {
  const checks = { numbers: MAY_OVERFLOW.test(text), strings: MAY_HOLD_SURROGATE_OR_NUL.test(text) };
  // Nesting n levels takes n opening and n closing brackets: a shorter text cannot exceed the limit.
  const mayNestTooDeep = text.length >= 2 * (MAX_JSON_DEPTH + 1);
  return checks.numbers || checks.strings || mayNestTooDeep ? checks : null;
}

/** The 422 for a body the API refuses whatever the route (see firstJsonDefect), or null. */
export function jsonDefectProblem(value: unknown, text: string): Problem | null {
  const checks = checksFor(text);
  if (checks === null) return null;
  const defect = firstJsonDefect(value, MAX_JSON_DEPTH, checks);
  if (defect === null) return null;
  const error: FieldError = { pointer: defect.pointer, message: defect.message };
  return problems.validation([error], `${defect.pointer || 'the body'} ${defect.message}`);
}

const INVALID_UTF8 = 'the body is not valid JSON: it is not valid UTF-8';

/** The body as text, or the 400 of bytes that are not UTF-8 (never decoded to U+FFFD silently). */
export function decodeJsonBytes(raw: Buffer): string {
  if (!isUtf8(raw)) throw problems.malformedRequest(INVALID_UTF8);
  return raw.toString('utf8');
}

/**
 * For parsers of their own (signed webhooks read raw bytes): the parsed body, or the problem the
 * app's JSON parser would answer (400 not UTF-8 or not JSON, 422 a defect of firstJsonDefect).
 */
export function parseJsonBytes(raw: Buffer): unknown {
  const text = decodeJsonBytes(raw);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (error) {
    throw problems.malformedRequest(`the body is not valid JSON: ${(error as Error).message}`);
  }
  const defect = jsonDefectProblem(parsed, text);
  if (defect) throw defect;
  return parsed;
}

/**
 * The app's JSON body parser: bytes that are not UTF-8 are refused (400), then Fastify's safe
 * parser (prototype poisoning refused), then the defect walk before any recursive code touches
 * the value. An empty body declared as JSON is "no body" on routes that take none
 * (`curl -H 'content-type: application/json' .../start`); where a route declares a body it is
 * malformed (400), as docs/errors.md says.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = typeof body === 'string' ? Buffer.from(body) : body;
    if (!isUtf8(raw)) return done(problems.malformedRequest(INVALID_UTF8));
    const text = raw.toString('utf8');
    if (text.trim() === '') {
      if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
      return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
    }
    parseJson(request, text, (error, value) => {
      if (error) return done(error);
      const defect = jsonDefectProblem(value, text);
      return defect ? done(defect) : done(null, value);
    });
  });
}
