import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { newId } from '../lib/ids.js';
import { Problem, problems } from './problems.js';
import { toFieldErrors } from './validation.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply
    .code(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .serializer((body: unknown) => JSON.stringify(body))
    .send(problem.toBody(request.url.split('?')[0]));
}

type ValidationFailure = FastifyError & { validation: ErrorObject[]; validationContext: string };

/** Maps Fastify's own errors (parsing, limits, validation) onto our problem registry. */
function fromFrameworkError(error: FastifyError, bodyLimit: number): Problem | null {
  if (error.validation) {
    const failure = error as unknown as ValidationFailure;
    const fieldErrors = toFieldErrors(failure.validation, failure.validationContext);
    return failure.validationContext === 'body' ? problems.validation(fieldErrors) : problems.invalidParameters(fieldErrors);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problems.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? problems.unsupportedMediaType('send the body as application/json')
        : problems.malformedRequest('the Content-Length header does not match the body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problems.malformedRequest('the body is empty but Content-Type says JSON; send a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problems.malformedRequest(`the body is not valid JSON: ${error.message}`);
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return problems.malformedRequest(`the body could not be parsed: ${error.message}`);
  }
  return null;
}

/** Seconds a client should wait before retrying when the database is briefly unavailable. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * `isDatabaseUnavailable` tells a database that cannot serve now (unreachable, restarting, or a
 * SQLite write lock held past the wait) from a bug: the first answers 503 with Retry-After.
 */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number, isDatabaseUnavailable: (error: unknown) => boolean = () => false): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A route may raise the limit (the event batch route does); quote the one that applied.
    const problem =
      error instanceof Problem
        ? error
        : isDatabaseUnavailable(error)
          ? problems.unavailable('the database cannot be reached or is busy; retry shortly', DATABASE_RETRY_AFTER_SECONDS)
          : fromFrameworkError(error, request.routeOptions.bodyLimit ?? bodyLimit);
    if (problem) {
      if (problem.status >= 500) request.log.error({ err: error }, problem.message);
      return sendProblem(request, reply, problem);
    }
    const errorId = newId();
    request.log.error({ err: error, error_id: errorId }, 'unhandled error');
    return sendProblem(request, reply, problems.internal(errorId));
  });

  // A second router holding every route pattern tells an unknown path (404) from a known path
  // asked with the wrong method (405), which Fastify itself does not distinguish.
  const patterns = FindMyWay();
  const methodsByPattern = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      const known = methodsByPattern.get(route.url) ?? new Set<string>();
      if (known.size === 0) methodsByPattern.set(route.url, known);
      if (!known.has(method)) {
        known.add(method);
        patterns.on(method as HTTPMethod, route.url, () => undefined, { pattern: route.url });
      }
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      if (method !== request.method && patterns.find(method, path)) allowed.add(method);
    }
    if (allowed.size > 0) return sendProblem(request, reply, problems.methodNotAllowed(request.method, [...allowed]));
    return sendProblem(request, reply, problems.notFound(`no route matches ${request.method} ${path}`));
  });
}
