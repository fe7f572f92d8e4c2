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
 * Ajv reports one error per failed branch of a union, which reads as noise ("must be string",
 * "must be null", "must match a schema in anyOf"). Per location keep the specific errors; when
 * only type mismatches remain, say once which types would do.
 */
export function toFieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const byPointer = new Map<string, ErrorObject[]>();
  for (const error of errors) {
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

function typeMessage(group: ErrorObject[]): string {
  const types = [...new Set(group.map((e) => String((e.params as { type: string }).type)))];
  return `must be ${types.join(' or ')}`;
}
