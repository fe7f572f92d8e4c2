import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { SegmentsDeps } from './deps.js';
import { SegmentInput, SegmentList, SegmentListQuery, SegmentParams, SegmentPatch, SegmentSchema } from './schemas.js';
import { createSegment, getSegment, patchSegment, removeSegment } from './service.js';
import { listSegments } from './store.js';

const route = routeOptionsFor('segments');

const notFound = problemDoc('no such segment in this workspace');

export function segmentRoutes(ctx: SegmentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(segmentCollectionRoutes(ctx));
    await app.register(segmentWriteRoutes(ctx));
  };
}

/** List, create and read. */
function segmentCollectionRoutes(ctx: SegmentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/segments', route('listSegments', { querystring: SegmentListQuery, response: { 200: SegmentList } }), async (request) =>
      listSegments(ctx.db, principalOf(request).workspaceId, request.query),
    );

    app.post(
      '/v1/segments',
      route('createSegment', {
        description: 'Saves a reusable audience filter. Referenced segments must exist; cycles and chains over 5 levels are refused.',
        body: SegmentInput,
        response: { 201: SegmentSchema, 409: problemDoc('the key is taken in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createSegment(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );

    app.get('/v1/segments/:id', route('getSegment', { params: SegmentParams, response: { 200: SegmentSchema, 404: notFound } }), async (request) =>
      getSegment(ctx, principalOf(request).workspaceId, request.params.id),
    );
  };
}

/** Edit and delete of one segment. */
function segmentWriteRoutes(ctx: SegmentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.patch(
      '/v1/segments/:id',
      route('updateSegment', {
        description: 'Changes name, description or rule; the key is fixed. An unchanged body changes nothing and logs nothing.',
        params: SegmentParams,
        body: SegmentPatch,
        response: { 200: SegmentSchema, 404: notFound },
      }),
      async (request) => {
        const principal = principalOf(request);
        return patchSegment(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );

    app.delete(
      '/v1/segments/:id',
      route('deleteSegment', {
        params: SegmentParams,
        response: {
          204: EmptyBody,
          404: notFound,
          409: problemDoc('another segment or a non-archived experiment still refers to it; `referrers` lists them'),
        },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        await removeSegment(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
