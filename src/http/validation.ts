import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './problems.js';
import { ID_MESSAGE, ID_PATTERN } from './schemas.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const shared: Options = { allErrors: true, strict: false, useDefaults: true, removeAdditional: false };

const rfc3339DateTime = fullFormats['date-time'] as { validate: (text: string) => boolean };

/**
 * RFC 3339 allows a leap second (`23:59:60`), which no clock here can store and `Date.parse`
 * reads as NaN: a time that passes the format must also be an instant the server can use.
 * (Impossible dates such as Feb 30 and hour 24 already fail the RFC 3339 check.)
 */
export function isUsableDateTime(text: string): boolean {
  return rfc3339DateTime.validate(text) && Number.isFinite(Date.parse(text));
}

function createAjv(options: Options): Ajv {
  const ajv = addFormats(new Ajv({ ...shared, ...options }));
  ajv.addFormat('date-time', { type: 'string', validate: isUsableDateTime });
  return ajv;
}

// Bodies are JSON and must be typed exactly ("5" is not a weight); query strings and path
// parameters are always text, so they are coerced to the declared types.
const bodyAjv = createAjv({ coerceTypes: false });
const parameterAjv = createAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : parameterAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Patterns and formats named in words, so a client reads what to send rather than a regex. */
const PATTERN_MESSAGES = new Map([[ID_PATTERN, ID_MESSAGE]]);
const FORMAT_MESSAGES = new Map([['date-time', 'must be an RFC 3339 date-time that exists, with Z or an offset (e.g. 2024-12-31T23:59:59Z)']]);

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return PATTERN_MESSAGES.get((error.params as { pattern: string }).pattern) ?? error.message ?? 'is invalid';
    case 'format':
      return FORMAT_MESSAGES.get((error.params as { format: string }).format) ?? error.message ?? 'is invalid';
    default:
      return error.message ?? 'is invalid';
  }
}

function pointerOf(error: ErrorObject): string {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const child = params.missingProperty ?? (error.keyword === 'additionalProperties' ? params.additionalProperty : undefined);
  if (child === undefined) return error.instancePath;
  return `${error.instancePath}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * Ajv reports one error per failed branch of a union, which reads as noise ("must be string",
 * "must be null", "must match a schema in anyOf"). Per location keep the specific errors; when
 * only type mismatches remain, say once which types would do.
 */
export function toFieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const byPointer = new Map<string, ErrorObject[]>();
  for (const error of withoutMismatchedBranches(errors)) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const pointer = pointerOf(error);
    byPointer.set(pointer, [...(byPointer.get(pointer) ?? []), error]);
  }
  const result: FieldError[] = [];
  for (const [pointer, group] of byPointer) {
    const specific = group.filter((e) => e.keyword !== 'type');
    const messages = specific.length > 0 ? [...new Set(specific.map(describe))] : [typeMessage(group)];
    for (const message of messages) {
      if (part === 'body') result.push({ pointer, message });
      else result.push({ parameter: pointer.replace(/^\//, '') || part, message });
    }
  }
  if (result.length === 0 && errors[0])
    result.push(part === 'body' ? { pointer: '', message: describe(errors[0]) } : { parameter: part, message: describe(errors[0]) });
  return result;
}

const BRANCH = /\/(?:anyOf|oneOf)\/\d+(?=\/)/g;

/**
 * A union branch whose discriminator does not match (`type: "fixed"` against `"bandit"`) says
 * nothing about the value: its errors (every bandit field "is not a known field" to the fixed
 * branch) are dropped, unless every branch of that union mismatches, when the discriminator itself
 * is what is wrong.
 */
function withoutMismatchedBranches(errors: ErrorObject[]): ErrorObject[] {
  const mismatched = new Set<string>();
  for (const error of errors) {
    if (error.keyword !== 'const') continue;
    const branch = /^(.*\/(?:anyOf|oneOf)\/\d+)\/properties\/[^/]+\/const$/.exec(error.schemaPath)?.[1];
    if (branch !== undefined) mismatched.add(branch);
  }
  if (mismatched.size === 0) return errors;
  const branchesOf = new Map<string, Set<string>>();
  for (const error of errors) {
    for (const match of error.schemaPath.matchAll(BRANCH)) {
      const branch = error.schemaPath.slice(0, (match.index ?? 0) + match[0].length);
      const union = branch.replace(/\/\d+$/, '');
      branchesOf.set(union, (branchesOf.get(union) ?? new Set()).add(branch));
    }
  }
  const dropped = [...mismatched].filter((branch) => [...(branchesOf.get(branch.replace(/\/\d+$/, '')) ?? [])].some((other) => !mismatched.has(other)));
  return errors.filter((error) => !dropped.some((branch) => error.schemaPath.startsWith(`${branch}/`)));
}

function typeMessage(group: ErrorObject[]): string {
  const types = [...new Set(group.map((e) => String((e.params as { type: string }).type)))];
  return `must be ${types.join(' or ')}`;
}
