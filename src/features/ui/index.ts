import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { uiRoutes } from './routes.js';

/** The admin UI's static files (web/dist) need nothing from the context. */
export interface UiSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createUi(): UiSlice {
  return { routes: uiRoutes() };
}
