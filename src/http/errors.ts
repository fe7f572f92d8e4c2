import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { newId } from '../lib/ids.js';
import { lingerOverLargeBody } from './body-limit.js';
import { Problem, problemForStatus, problems } from './problems.js';
import { toFieldErrors } from './validation.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply
    .code(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .serializer((body: unknown) => JSON.stringify(body))
    .send(problem.toBody(pathOf(request)));
}

type ValidationFailure = FastifyError & { validation: ErrorObject[]; validationContext: string };

/** What http-errors (thrown by the static file server) carry besides a status. */
type HttpError = FastifyError & { expose?: boolean; headers?: Record<string, string> };

/** Errors of the HTTP layer itself (static files, the router) keep their 4xx status, as problems. */
function fromClientStatus(error: HttpError, path: string): Problem | null {
  const status = error.statusCode;
  if (status === undefined || status < 400 || status > 499) return null;
  const detail = typeof error.expose === 'boolean' ? `${path} cannot be served: ${error.message}` : error.message;
  const headers = Object.fromEntries(Object.entries(error.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return problemForStatus(status, detail, headers);
}

/** Maps Fastify's own errors (parsing, limits, validation, routing) onto our problem registry. */
function fromFrameworkError(error: FastifyError, bodyLimit: number, path: string): Problem | null {
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
  if (error instanceof SyntaxError) return problems.malformedRequest(`the body could not be parsed: ${error.message}`);
  return fromClientStatus(error, path);
}

/** The router's refusals, which reach `frameworkErrors` rather than the error handler. */
function fromRouterError(error: FastifyError, path: string): Problem {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return problems.malformedRequest(`the path ${path} is not valid percent-encoded UTF-8`);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return problems.uriTooLong(`a segment of the path ${path} is longer than the router reads`);
    default:
      return fromClientStatus(error, path) ?? problems.malformedRequest(`${path}: ${error.message}`);
  }
}

function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? '/';
}

/**
 * Fastify's `frameworkErrors`: the router's refusals (bad percent-encoding, an over-long path
 * parameter), answered before any hook ran, so the request id header is set here too.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  void sendProblem(request, reply, fromRouterError(error, pathOf(request)));
}

function clientErrorProblem(error: NodeJS.ErrnoException): Problem {
  if (error.code === 'HPE_HEADER_OVERFLOW') return problems.headersTooLarge(maxHeaderSize);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return problems.requestTimeout('the request was not received in time');
  return problems.malformedRequest('the request is not valid HTTP');
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes before Fastify had a
 * request (headers over the limit, a request that is not HTTP, a timeout). The answer is
 * written to the socket by hand, as a problem like every other, and the connection closed.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem = clientErrorProblem(error);
  this.log.debug({ err: error }, `client error ${problem.status}`);
  if (socket.writable) {
    const body = JSON.stringify(problem.toBody());
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
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
          : fromFrameworkError(error, request.routeOptions.bodyLimit ?? bodyLimit, pathOf(request));
    if (problem) {
      if (problem.status >= 500) request.log.error({ err: error }, problem.message);
      if (problem.status === 413) return lingerOverLargeBody(request, reply).then(() => sendProblem(request, reply, problem));
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
    const path = pathOf(request);
    const allowed = new Set<string>();
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      if (method !== request.method && patterns.find(method, path)) allowed.add(method);
    }
    if (allowed.size > 0) return sendProblem(request, reply, problems.methodNotAllowed(request.method, [...allowed]));
    return sendProblem(request, reply, problems.notFound(`no route matches ${request.method} ${path}`));
  });
}
