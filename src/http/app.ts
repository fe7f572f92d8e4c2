import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.js';
import { apiKeyRoutes } from '../features/api-keys/routes.js';
import { UNIT_ID_MAX_PARAM_LENGTH } from '../features/assignment/unit-id.js';
import { auditRoutes } from '../features/audit/routes.js';
import { healthRoutes } from '../features/health/routes.js';
import { createSlices } from '../features/index.js';
import { inboundRoutes } from '../features/inbound/routes.js';
import { leadRoutes } from '../features/leads/routes.js';
import { taskToolRoutes } from '../features/task-tool/routes.js';
import { webhookSourceRoutes } from '../features/webhook-sources/routes.js';
import { renderRoutes } from '../features/renders/routes.js';
import { sessionAuthenticator } from '../features/sessions/authenticate.js';
import { sessionRoutes } from '../features/sessions/routes.js';
import { templateRoutes } from '../features/templates/routes.js';
import { uiRoutes } from '../features/ui/routes.js';
import { workspaceRoutes } from '../features/workspaces/routes.js';
import { newId } from '../lib/ids.js';
import { installRequestMetrics, metricsRoutes } from '../observability/routes.js';
import { AccessLogController } from './access-log.js';
import { installAuth } from './auth.js';
import { installCors } from './cors.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './errors.js';
import { installJsonBodyParser } from './json-body.js';
import { installOpenApi } from './openapi.js';
import { validatorCompiler } from './validation.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Each feature contributes one plugin; this list, in this order (the OpenAPI document follows it), is the whole API. */
function features(ctx: AppContext) {
  const slices = createSlices(ctx);
  return [
    healthRoutes(ctx),
    workspaceRoutes(ctx),
    slices.environments.routes,
    apiKeyRoutes(ctx),
    auditRoutes(ctx),
    slices.events.routes,
    slices.metrics.routes,
    slices.segments.routes,
    templateRoutes(ctx),
    renderRoutes(ctx),
    slices.experiments.routes,
    slices.mutexGroups.routes,
    slices.assignment.routes,
    slices.ofrep.routes,
    webhookSourceRoutes(ctx),
    inboundRoutes(ctx),
    leadRoutes(ctx),
    taskToolRoutes(ctx),
    slices.analysis.routes,
    sessionRoutes(ctx),
    uiRoutes(ctx),
    metricsRoutes(ctx),
  ];
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimit,
    // A caller's X-Request-Id is kept when it is safe to log, so traces line up across services.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId();
    },
    // One access line per request (access-log.ts) instead of Fastify's two.
    logController: new AccessLogController(),
    return503OnClosing: true,
    // Path parameters are bounded by the unit id rule (unit-id.ts), the longest one a route takes.
    routerOptions: { maxParamLength: UNIT_ID_MAX_PARAM_LENGTH },
    // Refusals by the router and by Node's HTTP parser are problems too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    ajv: { customOptions: { strict: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON only: a text/plain or form body answers 415 instead of being half-understood.
  app.removeContentTypeParser(['text/plain']);
  installJsonBodyParser(app);
  // Set before anything can fail, so error responses carry it too; a callback hook costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  installRequestMetrics(app, ctx);
  installErrorHandling(app, ctx.config.bodyLimit, (error) => ctx.seam.isUnavailable(error));
  await installCors(app, ctx.config.corsOrigins);
  installAuth(app, ctx.authenticator, sessionAuthenticator(ctx));
  await installOpenApi(app);
  for (const feature of features(ctx)) await app.register(feature);
  await app.ready();
  return app;
}
