import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { webhookSourceRoutes } from './routes.js';

/** Source secrets are sealed with the secret box (they must be read back to verify signatures). */
export type WebhookSourcesDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets'>;

export interface WebhookSourcesSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createWebhookSources(deps: WebhookSourcesDeps): WebhookSourcesSlice {
  return { routes: webhookSourceRoutes(deps) };
}
