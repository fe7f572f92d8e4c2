import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { MetricInput, MetricList, MetricListQuery, MetricParams, MetricSchema } from './schemas.js';
import { createMetric, getMetric } from './service.js';
import { listMetrics } from './store.js';

const route = routeOptionsFor('metrics');

export function metricRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/metrics',
      route('listMetrics', { querystring: MetricListQuery, response: { 200: MetricList } }),
      async (request) => listMetrics(ctx.db, principalOf(request).workspaceId, request.query),
    );

    app.post(
      '/v1/metrics',
      route('createMetric', {
        description: 'Defines a metric. Rules beyond the schema (aggregation per kind, property_path, window) are in docs/metrics.md.',
        body: MetricInput,
        response: { 201: MetricSchema, 409: problemDoc('the key is taken in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createMetric(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );

    app.get(
      '/v1/metrics/:id',
      route('getMetric', {
        params: MetricParams,
        response: { 200: MetricSchema, 404: problemDoc('no such metric in this workspace') },
      }),
      async (request) => getMetric(ctx, principalOf(request).workspaceId, request.params.id),
    );
  };
}
