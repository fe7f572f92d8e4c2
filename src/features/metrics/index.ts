import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { metricRoutes } from './routes.js';

/** What the metrics slice needs: the database, the dialect seam (unique keys) and the clock. Other slices read it through read.ts. */
export type MetricsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

export interface MetricsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createMetrics(deps: MetricsDeps): MetricsSlice {
  return { routes: metricRoutes(deps) };
}
