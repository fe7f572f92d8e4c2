import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { webhookSourceRoutes } from './routes.js';
import type { WebhookSourcesDeps } from './deps.js';

export interface WebhookSourcesSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createWebhookSources(deps: WebhookSourcesDeps): WebhookSourcesSlice {
  return { routes: webhookSourceRoutes(deps) };
}
