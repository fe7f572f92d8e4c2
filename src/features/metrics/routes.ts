import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { MetricsDeps } from './deps.js';
import { MetricInput, MetricList, MetricListQuery, MetricParams, MetricPatch, MetricSchema } from './schemas.js';
import { createMetric, getMetric, patchMetric, removeMetric } from './service.js';
import { listMetrics } from './store.js';

const route = routeOptionsFor('metrics');
const notFound = problemDoc('no such metric in this workspace');

export function metricRoutes(ctx: MetricsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/metrics', route('listMetrics', { querystring: MetricListQuery, response: { 200: MetricList } }), async (request) =>
      listMetrics(ctx.db, principalOf(request).workspaceId, request.query),
    );

    app.post(
      '/v1/metrics',
      route('createMetric', {
        description:
          'Defines a metric. Rules beyond the schema (aggregation per kind, property_path, window, capping, ratio components) are in docs/metrics.md.',
        body: MetricInput,
        response: { 201: MetricSchema, 409: problemDoc('the key is taken in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createMetric(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );

    app.get('/v1/metrics/:id', route('getMetric', { params: MetricParams, response: { 200: MetricSchema, 404: notFound } }), async (request) =>
      getMetric(ctx, principalOf(request).workspaceId, request.params.id),
    );

    app.patch(
      '/v1/metrics/:id',
      route('updateMetric', {
        params: MetricParams,
        body: MetricPatch,
        response: { 200: MetricSchema, 404: notFound },
      }),
      async (request) => {
        const principal = principalOf(request);
        return patchMetric(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );

    app.delete(
      '/v1/metrics/:id',
      route('deleteMetric', {
        params: MetricParams,
        response: { 204: EmptyBody, 404: notFound, 409: problemDoc('a draft or running experiment, or a ratio metric, still uses it; `referrers` lists them') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        await removeMetric(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
