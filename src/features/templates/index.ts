import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { templateRoutes } from './routes.js';
import type { TemplatesDeps } from './deps.js';

export interface TemplatesSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createTemplates(deps: TemplatesDeps): TemplatesSlice {
  return { routes: templateRoutes(deps) };
}
