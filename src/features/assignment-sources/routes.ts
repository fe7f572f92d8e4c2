import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { DataSourcesDeps } from '../data-sources/deps.js';
import {
  AssignmentSourceInput,
  AssignmentSourceList,
  AssignmentSourceListQuery,
  AssignmentSourceParams,
  AssignmentSourcePatch,
  AssignmentSourceSchema,
  AssignmentSourceSummary,
} from './schemas.js';
import { createAssignmentSource, getAssignmentSource, patchAssignmentSource, removeAssignmentSource, summarizeAssignmentSource } from './service.js';
import { listAssignmentSources } from './store.js';

const route = routeOptionsFor('warehouse');
const notFound = problemDoc('no such assignment source in this workspace');
const unreachable = problemDoc('the source could not be reached: refused by the network rule, no connection, or its credentials were refused');
const timedOut = problemDoc('the query ran past VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS and was stopped');

/** /v1/assignment-sources: the exposures of experiments assigned elsewhere (docs/warehouse.md). */
export function assignmentSourceRoutes(ctx: DataSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/assignment-sources',
      route('listAssignmentSources', { querystring: AssignmentSourceListQuery, response: { 200: AssignmentSourceList } }),
      async (request) => {
        const { data_source_id, ...page } = request.query;
        return listAssignmentSources(ctx.db, principalOf(request).workspaceId, data_source_id, page);
      },
    );
    app.post(
      '/v1/assignment-sources',
      route('createAssignmentSource', { body: AssignmentSourceInput, response: { 201: AssignmentSourceSchema, 502: unreachable, 504: timedOut } }),
      async (request, reply) => reply.code(201).send(await createAssignmentSource(ctx, actorOf(request), request.body)),
    );
    app.get(
      '/v1/assignment-sources/:id',
      route('getAssignmentSource', { params: AssignmentSourceParams, response: { 200: AssignmentSourceSchema, 404: notFound } }),
      async (request) => getAssignmentSource(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/assignment-sources/:id',
      route('updateAssignmentSource', {
        params: AssignmentSourceParams,
        body: AssignmentSourcePatch,
        response: { 200: AssignmentSourceSchema, 404: notFound, 502: unreachable, 504: timedOut },
      }),
      async (request) => patchAssignmentSource(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/assignment-sources/:id',
      route('deleteAssignmentSource', {
        params: AssignmentSourceParams,
        response: { 204: EmptyBody, 404: notFound, 409: problemDoc('experiments read their exposures from it (`referrers` lists them)') },
      }),
      async (request, reply) => {
        await removeAssignmentSource(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/assignment-sources/:id/summary',
      route('summarizeAssignmentSource', {
        params: AssignmentSourceParams,
        response: { 200: AssignmentSourceSummary, 404: notFound, 502: unreachable, 504: timedOut },
      }),
      async (request) => summarizeAssignmentSource(ctx, principalOf(request).workspaceId, request.params.id),
    );
  };
}
