import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { problems } from '../../http/problems.js';
import { routeOptionsFor } from '../../http/route-options.js';
import type { AuditDeps } from './deps.js';
import { AuditList, AuditQuery } from './schemas.js';
import { listAudit } from './store.js';

const route = routeOptionsFor('audit');

export function auditRoutes(ctx: AuditDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/audit',
      route('listAudit', {
        description:
          'Every mutation and every admin-UI peek, newest first. Filters combine with AND: by action, target, actor (one API key or person by id; any key, any person, or every entry with no one behind it by actor_type) and time. Each entry names its actor (a person by name and email). 400 for actor_id together with actor_type system (a system entry has no actor).',
        querystring: AuditQuery,
        response: { 200: AuditList },
      }),
      async (request) => {
        const { since, until, ...rest } = request.query;
        if (rest.actor_id !== undefined && rest.actor_type === 'system') {
          throw problems.invalidParameters([{ parameter: 'actor_type', message: 'must be api_key or left out with actor_id: a system entry has no API key' }]);
        }
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
