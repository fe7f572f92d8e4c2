import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Executor } from '../../db/database.js';
import { registerDeliveryJobs } from './delivery-job.js';
import { publishEvent, type OutboundEvent } from './publish.js';
import { webhookEndpointRoutes } from './routes.js';
import type { WebhookEndpointsDeps } from './deps.js';

/** Enqueues one delivery per subscribed, enabled endpoint of the event's workspace; returns the event id. */
export type PublishEvent = (executor: Executor, event: OutboundEvent) => Promise<string>;

export interface WebhookEndpointsSlice {
  routes: FastifyPluginAsyncTypebox;
  publish: PublishEvent;
  /** Registers the delivery job (app/jobs.ts). */
  registerJobs(): void;
}

export function createWebhookEndpoints(deps: WebhookEndpointsDeps): WebhookEndpointsSlice {
  return {
    routes: webhookEndpointRoutes(deps),
    publish: (executor, event) => publishEvent(deps, executor, event),
    registerJobs: () => registerDeliveryJobs(deps),
  };
}
