import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { metricRoutes } from './routes.js';
import type { MetricsDeps } from './deps.js';

export interface MetricsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createMetrics(deps: MetricsDeps): MetricsSlice {
  return { routes: metricRoutes(deps) };
}
