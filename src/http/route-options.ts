import type { FastifySchema } from 'fastify';
import type { AuthScope } from './auth.js';

/** What a route's schema says besides its operation and tag: params, body, responses, description. */
type RouteSchema = Omit<FastifySchema, 'tags'> & { description?: string };

/**
 * The route options of one slice of the API: each route names its operation (the OpenAPI
 * operationId that clients are generated from), is tagged with the slice, and declares who may
 * call it. The schema's own types pass through, so handlers keep their typed request.
 */
export function routeOptionsFor(tag: string, defaultScope: AuthScope = 'server') {
  return <Schema extends RouteSchema>(operationId: string, schema: Schema, scope: AuthScope = defaultScope) => ({
    config: { auth: scope },
    schema: { operationId, tags: [tag], ...schema },
  });
}
