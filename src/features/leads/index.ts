import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { leadRoutes } from './routes.js';
import type { LeadsDeps } from './deps.js';

export interface LeadsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createLeads(deps: LeadsDeps): LeadsSlice {
  return { routes: leadRoutes(deps) };
}
