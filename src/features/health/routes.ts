import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { API_VERSION } from '../../http/openapi.js';
import { routeOptionsFor } from '../../http/route-options.js';
import type { HealthDeps } from './deps.js';
import { checkReadiness } from './readiness.js';

const route = routeOptionsFor('health', 'public');

const Health = Type.Object({ status: Type.Literal('ok'), version: Type.String() });
const Check = Type.Object({
  status: Type.Enum(['ok', 'unavailable']),
  latency_ms: Type.Integer(),
  detail: Type.Optional(Type.String()),
});
const Readiness = Type.Object({
  status: Type.Enum(['ready', 'unavailable']),
  checks: Type.Object({ database: Check, buffer: Check }),
});

export function healthRoutes(ctx: HealthDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/healthz',
      route('health', {
        description: 'Liveness: answers without touching the database, so it stays cheap under load.',
        response: { 200: Health },
      }),
      async () => ({ status: 'ok' as const, version: API_VERSION }),
    );

    app.get(
      '/v1/readyz',
      route('readiness', {
        description: 'Readiness for load balancers: 200 when the database answers and the event buffer is reachable, 503 otherwise.',
        response: { 200: Readiness, 503: Readiness },
      }),
      async (_request, reply) => {
        const { ready, checks } = await checkReadiness(ctx);
        return reply.code(ready ? 200 : 503).send({ status: ready ? ('ready' as const) : ('unavailable' as const), checks });
      },
    );

    if (ctx.config.benchRoutes) {
      // The baseline the benchmarks divide by: the same server stack with no work to do. POST
      // takes the scenario's body through the app's JSON parser, as the bare route's POST does.
      app.get('/_bench/noop', { config: { auth: 'public' }, schema: { hide: true } }, async () => ({ ok: true }));
      app.post('/_bench/noop', { config: { auth: 'public' }, schema: { hide: true } }, async (request) => ({ ok: request.body !== undefined }));
    }
  };
}
