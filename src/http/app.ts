import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.js';
import { newId } from '../lib/ids.js';
import { requestMetricsObserver } from '../observability/routes.js';
import { AccessLogController } from './access-log.js';
import { installAuth, type SessionAuthenticator } from './auth.js';
import { installCors } from './cors.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './errors.js';
import { installJsonBodyParser } from './json-body.js';
import { installOpenApi, type RoleDocs } from './openapi.js';
import { problems } from './problems.js';
import { isClickHouseUnreachable } from '../clickhouse/reachability.js';
import { requestLoggerFactory } from './request-logger.js';
import { TurnBatchedResponse } from './turn-batched-response.js';
import { validatorCompiler } from './validation.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** What the composition root (app/http.ts) gives the HTTP app: the API's plugins and its rules. */
export interface HttpParts {
  /** One plugin per slice: the whole API, in the order openapi.json lists it. */
  routes: readonly FastifyPluginAsyncTypebox[];
  /** Resolves the admin UI's session cookie. */
  sessions: SessionAuthenticator;
  /** The longest path parameter a route takes (the unit id rule). */
  maxParamLength: number;
  /** Which role each route needs, for the OpenAPI description (the people slice's table). */
  roles?: RoleDocs;
}

export async function buildHttpApp(ctx: AppContext, parts: HttpParts): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimit,
    // A caller's X-Request-Id is kept when it is safe to log, so traces line up across services.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId();
    },
    // One access line per request (access-log.ts) instead of Fastify's two; it counts the request metrics too.
    logController: new AccessLogController(requestMetricsObserver(ctx)),
    // Each request's pino child is made only when something logs through it.
    childLoggerFactory: requestLoggerFactory,
    return503OnClosing: true,
    // Path parameters are bounded by the longest one a route takes (the unit id rule).
    routerOptions: { maxParamLength: parts.maxParamLength },
    // Refusals by the router and by Node's HTTP parser are problems too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    ajv: { customOptions: { strict: false } },
    // Responses of one event-loop turn are written together at its end (turn-batched-response.ts).
    ...(ctx.config.responseBatching ? { http: { ServerResponse: TurnBatchedResponse as unknown as typeof ServerResponse } } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON only: a text/plain or form body answers 415 instead of being half-understood.
  app.removeContentTypeParser(['text/plain']);
  installJsonBodyParser(app);
  // Set before anything can fail, so error responses carry it too; a callback hook costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // While requests arrive, the analysis's background writes rest and stay short (db/background-writes.ts).
    ctx.background.noteRequest();
    // U+0000 in a path or query parameter: PostgreSQL text cannot hold it, and no id, key or unit
    // id contains one. One check here refuses it on every route and database alike.
    if (request.url.includes('%00')) return done(problems.malformedRequest('the URL contains %00 (U+0000), which no parameter accepts'));
    done();
  });

  installErrorHandling(app, ctx.config.bodyLimit, (error) => ctx.seam.isUnavailable(error) || (ctx.clickhouse !== null && isClickHouseUnreachable(error)));
  await installCors(app, ctx.config.corsOrigins);
  installAuth(app, ctx.authenticator, parts.sessions);
  await installOpenApi(app, parts.roles);
  for (const routes of parts.routes) await app.register(routes);
  await app.ready();
  return app;
}
