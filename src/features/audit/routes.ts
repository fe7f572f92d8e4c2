import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import type { AuditDeps } from './index.js';
import { AuditList, AuditQuery } from './schemas.js';
import { listAudit } from './store.js';

const route = routeOptionsFor('audit');

export function auditRoutes(ctx: AuditDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/audit',
      route('listAudit', {
        description: 'Every mutation and every admin-UI peek, newest first. Filters combine with AND.',
        querystring: AuditQuery,
        response: { 200: AuditList },
      }),
      async (request) => {
        const { since, until, ...rest } = request.query;
        const filters = {
          ...rest,
          since: since === undefined ? undefined : Date.parse(since),
          until: until === undefined ? undefined : Date.parse(until),
        };
        return listAudit(ctx.db, principalOf(request).workspaceId, filters, rest);
      },
    );
  };
}
