import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { LeadsDeps } from './deps.js';
import { LeadInput, LeadList, LeadListQuery, LeadParams, LeadPatch, LeadSchema } from './schemas.js';
import { createLead, getLead, patchLead } from './service.js';
import { listLeads } from './store.js';

const route = routeOptionsFor('leads');
const notFound = problemDoc('no such lead in this workspace');
const taskTaken = problemDoc('another lead of the workspace is linked to this task_tool_task_id');

export function leadRoutes(ctx: LeadsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/leads', route('listLeads', { querystring: LeadListQuery, response: { 200: LeadList } }), async (request) =>
      listLeads(ctx.db, principalOf(request).workspaceId, request.query),
    );

    app.post('/v1/leads', route('createLead', { body: LeadInput, response: { 201: LeadSchema, 409: taskTaken } }), async (request, reply) => {
      const principal = principalOf(request);
      return reply.code(201).send(await createLead(ctx, principal.workspaceId, principal.keyId, request.body));
    });

    app.get('/v1/leads/:id', route('getLead', { params: LeadParams, response: { 200: LeadSchema, 404: notFound } }), async (request) =>
      getLead(ctx, principalOf(request).workspaceId, request.params.id),
    );

    app.patch(
      '/v1/leads/:id',
      route('updateLead', {
        description: 'Changes name, email, status or the linked task (null unlinks). An unchanged body changes nothing and logs nothing.',
        params: LeadParams,
        body: LeadPatch,
        response: { 200: LeadSchema, 404: notFound, 409: taskTaken },
      }),
      async (request) => {
        const principal = principalOf(request);
        return patchLead(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );
  };
}
