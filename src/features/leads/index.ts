import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { leadRoutes } from './routes.js';

export type LeadsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

export interface LeadsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createLeads(deps: LeadsDeps): LeadsSlice {
  return { routes: leadRoutes(deps) };
}
