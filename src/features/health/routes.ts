import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { AppContext } from '../../context.js';
import { API_VERSION } from '../../http/openapi.js';

const Health = Type.Object({ status: Type.Literal('ok'), version: Type.String() });

export function healthRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/healthz',
      {
        config: { auth: 'public' },
        schema: {
          operationId: 'health',
          tags: ['health'],
          description: 'Liveness: answers without touching the database, so it stays cheap under load.',
          response: { 200: Health },
        },
      },
      async () => ({ status: 'ok' as const, version: API_VERSION }),
    );

    if (ctx.config.benchRoutes) {
      // The baseline the benchmarks divide by: the same server stack with no work to do.
      app.get('/_bench/noop', { config: { auth: 'public' }, schema: { hide: true } }, async () => ({ ok: true }));
    }
  };
}
