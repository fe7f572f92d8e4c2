import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerWebhookJobs } from './jobs.js';
import { inboundRoutes } from './routes.js';
import type { InboundDeps } from './deps.js';

export interface InboundSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Registers the hourly purge of idempotency keys, deliveries and applied history items (app/jobs.ts). */
  registerJobs(): void;
}

export function createInbound(deps: InboundDeps): InboundSlice {
  return { routes: inboundRoutes(deps), registerJobs: () => registerWebhookJobs(deps) };
}
