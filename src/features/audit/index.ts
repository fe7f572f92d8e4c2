import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { auditRoutes } from './routes.js';
import type { AuditDeps } from './deps.js';

export interface AuditSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createAudit(deps: AuditDeps): AuditSlice {
  return { routes: auditRoutes(deps) };
}
