import { errorCodes, type FastifyInstance } from 'fastify';
import { problems, type Problem } from './problems.js';

/**
 * How deeply objects and arrays may nest in a request body; the top-level value is depth 1.
 * Legitimate bodies stay far below it (event properties allow 8, an audience about 22), while
 * recursive code (JSON.stringify, validators, templates) overflows the stack some thousands deep.
 */
export const MAX_JSON_DEPTH = 128;

interface Frame {
  value: object;
  depth: number;
  parent: Frame | null;
  key: string;
}

function pointerOf(frame: Frame): string {
  const keys: string[] = [];
  for (let at: Frame | null = frame; at?.parent; at = at.parent) keys.push(at.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return keys
    .reverse()
    .map((key) => `/${key}`)
    .join('');
}

/**
 * The JSON Pointer of the first object or array nested deeper than `limit`, or null. It walks
 * with its own stack, not by recursion, so a hostile body cannot overflow the call stack here.
 */
export function pointerBeyondDepth(value: unknown, limit = MAX_JSON_DEPTH): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: '' }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > limit) return pointerOf(frame);
    const container = frame.value as Record<string, unknown>;
    const keys = Object.keys(container);
    // Pushed last to first, so they are visited in document order.
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      const child = container[key];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return null;
}

/** The 422 for a body nested too deeply, or null; `textLength` lets short bodies skip the walk. */
export function jsonDepthProblem(value: unknown, textLength = Infinity): Problem | null {
  // Nesting n levels takes n opening and n closing brackets: a shorter text cannot exceed the limit.
  if (textLength < 2 * (MAX_JSON_DEPTH + 1)) return null;
  const pointer = pointerBeyondDepth(value);
  if (pointer === null) return null;
  return problems.validation(
    [{ pointer, message: `nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels` }],
    `the body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
  );
}

/** For parsers of their own (signed webhooks read raw bytes): throws the 422 of a too-deep body. */
export function assertJsonDepth(value: unknown, textLength?: number): void {
  const problem = jsonDepthProblem(value, textLength);
  if (problem) throw problem;
}

/**
 * The app's JSON body parser: Fastify's safe parser (prototype poisoning refused), then the
 * depth check before any recursive code touches the value. An empty body declared as JSON is
 * "no body" on routes that take none (`curl -H 'content-type: application/json' .../start`);
 * where a route declares a body it is malformed (400), as docs/errors.md says.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
      return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
    }
    parseJson(request, text, (error, value) => {
      if (error) return done(error);
      const tooDeep = jsonDepthProblem(value, text.length);
      return tooDeep ? done(tooDeep) : done(null, value);
    });
  });
}
