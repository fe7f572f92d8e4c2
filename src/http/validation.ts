import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './problems.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const shared: Options = { allErrors: true, strict: false, useDefaults: true, removeAdditional: false };

function createAjv(options: Options): Ajv {
  return addFormats(new Ajv({ ...shared, ...options }));
}

// Bodies are JSON and must be typed exactly ("5" is not a weight); query strings and path
// parameters are always text, so they are coerced to the declared types.
const bodyAjv = createAjv({ coerceTypes: false });
const parameterAjv = createAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : parameterAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
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
 * Ajv reports one error per failed branch of a union, which reads as noise; keep the most
 * specific errors per location and drop the generic "must match a schema in anyOf" echoes.
 */
export function toFieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const specific = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const chosen = specific.length > 0 ? specific : errors;
  const seen = new Set<string>();
  const result: FieldError[] = [];
  for (const error of chosen) {
    const pointer = pointerOf(error);
    const message = describe(error);
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (part === 'body') result.push({ pointer, message });
    else result.push({ parameter: pointer.replace(/^\//, '') || part, message });
  }
  return result;
}
