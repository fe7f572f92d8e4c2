import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { auditRoutes } from './routes.js';

// Other slices write their entries through recorder.ts (in their own transaction); this slice
// only lists them.
export type AuditDeps = Pick<AppContext, 'db'>;

export interface AuditSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createAudit(deps: AuditDeps): AuditSlice {
  return { routes: auditRoutes(deps) };
}
