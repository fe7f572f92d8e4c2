import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from '../../http/validation.js';

/**
 * Makes the calling plugin hand every request body to its routes as the raw bytes received,
 * whatever the content type. Signatures are computed over those exact bytes: a body parsed and
 * re-serialised no longer verifies. Fastify encapsulates content-type parsers per plugin, so
 * routes registered elsewhere keep the app's JSON parser.
 */
export function acceptRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

/** The request's bytes; an absent body is empty. */
export function rawBodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/**
 * The body schema of a raw-body route only documents it (the handler parses and validates the
 * bytes after checking the signature); params, query and headers are validated as usual.
 */
export const rawBodyValidatorCompiler: FastifySchemaCompiler<unknown> = (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route));
