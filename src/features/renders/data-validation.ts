// Render data is checked against the fields schema frozen with the version, with pointers into
// the request body (`/data/...`), before anything is queued.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { problems } from '../../http/problems.js';
import { toFieldErrors } from '../../http/validation.js';

const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: false });
addFormats.default(ajv);

/** A version's schema never changes, so its compiled validator is kept by version. */
const validators = new LRUCache<string, ValidateFunction>({ max: 500 });

/** Enough to fix a payload; a list of thousands helps no one. */
const MAX_REPORTED_ERRORS = 50;

export function validateRenderData(versionKey: string, fieldsSchema: string, data: unknown): void {
  let validate = validators.get(versionKey);
  if (!validate) {
    validate = ajv.compile(JSON.parse(fieldsSchema) as object);
    validators.set(versionKey, validate);
  }
  if (validate(data)) return;
  const errors = (validate.errors ?? []).map((error) => ({ ...error, instancePath: `/data${error.instancePath}` }));
  throw problems.validation(toFieldErrors(errors, 'body').slice(0, MAX_REPORTED_ERRORS));
}
