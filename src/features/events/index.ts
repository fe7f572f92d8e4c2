import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { eventRoutes } from './routes.js';
import type { EventsDeps } from './deps.js';

export interface EventsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createEvents(deps: EventsDeps): EventsSlice {
  return { routes: eventRoutes(deps) };
}
