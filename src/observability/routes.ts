import cluster from 'node:cluster';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Registry } from 'prom-client';
import type { AppContext } from '../context.js';
import type { ResponseObserver } from '../http/access-log.js';
import { problems } from '../http/problems.js';
import { routeOptionsFor } from '../http/route-options.js';
import { problemDoc } from '../http/schemas.js';
import { clusterMetricsText, joinClusterMetrics } from '../lib/cluster-metrics.js';
import { UNMATCHED_ROUTE } from './metrics.js';
import { processMetricsRegistry } from './process-metrics.js';

const route = routeOptionsFor('observability', 'public');

/** Whether metrics are on (config) and this app's registry (metrics). */
export type MetricsRoutesDeps = Pick<AppContext, 'config' | 'metrics'>;

/**
 * Measures every response, labelled by the route's pattern (`/v1/experiments/:id`), never the
 * raw URL, so ids in paths cannot multiply the series; null when metrics are off. The access
 * log controller (http/access-log.ts), which Fastify calls once per response anyway, calls it:
 * an onResponse hook would run Fastify's hook runner on every request for it.
 */
export function requestMetricsObserver(ctx: MetricsRoutesDeps): ResponseObserver | null {
  if (!ctx.config.metrics) return null;
  const metrics = ctx.metrics;
  return (method, route, statusCode, seconds) => metrics.observeRequest(method, route ?? UNMATCHED_ROUTE, statusCode, seconds);
}

/** GET /metrics in Prometheus text; not registered at all when VERDICT_METRICS=0 (a 404 problem then). */
export function metricsRoutes(ctx: MetricsRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    if (!ctx.config.metrics) return;
    // Made now, not at the first scrape: prom-client counts CPU time from when its metric is made.
    const processRegistry = processMetricsRegistry();
    const registries = () => [processRegistry, ctx.metrics.registry];
    // In `serve --processes N` the process a scrape reaches answers for all of them (via the primary).
    const inCluster = cluster.isWorker;
    if (inCluster) joinClusterMetrics(registries);
    app.get(
      '/metrics',
      route('getMetrics', {
        response: {
          200: { description: 'Prometheus text format 0.0.4', content: { [Registry.PROMETHEUS_CONTENT_TYPE]: { schema: { type: 'string' } } } },
          503: problemDoc('the other HTTP processes did not send their figures in time (serve --processes N)'),
        },
      }),
      async (_request, reply) => {
        const text = inCluster ? await clusterMetricsText() : await Registry.merge(registries()).metrics();
        if (text === null) throw problems.unavailable('the figures of the other HTTP processes did not arrive in time; try again', 1);
        return reply.header('content-type', Registry.PROMETHEUS_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
      },
    );
  };
}
