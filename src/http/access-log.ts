import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl, type Logger } from '../logger.js';

/**
 * Fastify's request logging reshaped into one access line per request, written when the
 * response has gone: method, route pattern, URL (credential-like query values redacted), status,
 * duration and, through the request's logger, the request id. Fastify's own two lines per request
 * ("incoming request" and "request completed", each serialising the request or reply) cost more
 * than half of a small route's time.
 */
export class AccessLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const level = error ? 'error' : 'info';
    // Fastify's request loggers are pino children of the service's logger.
    if (!(request.log as Logger).isLevelEnabled(level)) return;
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      url: redactUrl(request.url),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    // An error here is the response stream failing (the client went away mid-answer).
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request');
  }
}
