import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { templateRoutes } from './routes.js';

export type TemplatesDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

export interface TemplatesSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createTemplates(deps: TemplatesDeps): TemplatesSlice {
  return { routes: templateRoutes(deps) };
}
