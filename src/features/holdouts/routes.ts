import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import { ExperimentParams } from '../experiments/schemas.js';
import { holdoutResultsRoutes } from './analysis/routes.js';
import type { HoldoutsDeps } from './deps.js';
import { listHoldouts } from './read.js';
import {
  ExperimentHoldouts,
  HoldoutExperiments,
  HoldoutInput,
  HoldoutList,
  HoldoutListQuery,
  HoldoutParams,
  HoldoutPatch,
  HoldoutSchema,
  OptOutInput,
} from './schemas.js';
import Type from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import {
  archiveHoldout,
  createHoldout,
  endHoldout,
  experimentHoldouts,
  getHoldout,
  holdoutExperiments,
  optOut,
  patchHoldout,
  removeOptOut,
  startHoldout,
} from './service.js';

const route = routeOptionsFor('holdouts');
const notFound = problemDoc('no such holdout in this workspace');
const conflict = problemDoc('the holdout’s status does not allow this change now');

export function holdoutRoutes(ctx: HoldoutsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(definitionRoutes(ctx));
    await app.register(lifecycleRoutes(ctx));
    await app.register(experimentSideRoutes(ctx));
    await app.register(holdoutResultsRoutes(ctx));
  };
}

function definitionRoutes(ctx: HoldoutsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/holdouts', route('listHoldouts', { querystring: HoldoutListQuery, response: { 200: HoldoutList } }), async (request) =>
      listHoldouts(ctx.db, principalOf(request).workspaceId, request.query),
    );
    app.post('/v1/holdouts', route('createHoldout', { body: HoldoutInput, response: { 201: HoldoutSchema } }), async (request, reply) =>
      reply.code(201).send(await createHoldout(ctx, actorOf(request), request.body)),
    );
    app.get('/v1/holdouts/:id', route('getHoldout', { params: HoldoutParams, response: { 200: HoldoutSchema, 404: notFound } }), async (request) =>
      getHoldout(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/holdouts/:id',
      route('updateHoldout', { params: HoldoutParams, body: HoldoutPatch, response: { 200: HoldoutSchema, 404: notFound, 409: conflict } }),
      async (request) => patchHoldout(ctx, actorOf(request), request.params.id, request.body),
    );
    app.get(
      '/v1/holdouts/:id/experiments',
      route('listHoldoutExperiments', { params: HoldoutParams, response: { 200: HoldoutExperiments, 404: notFound } }),
      async (request) => holdoutExperiments(ctx, principalOf(request).workspaceId, request.params.id),
    );
  };
}

function lifecycleRoutes(ctx: HoldoutsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const schema = { params: HoldoutParams, response: { 200: HoldoutSchema, 404: notFound, 409: conflict } };
    app.post('/v1/holdouts/:id/start', route('startHoldout', schema), async (request) => startHoldout(ctx, actorOf(request), request.params.id));
    app.post('/v1/holdouts/:id/end', route('endHoldout', schema), async (request) => endHoldout(ctx, actorOf(request), request.params.id));
    app.post('/v1/holdouts/:id/archive', route('archiveHoldout', { params: HoldoutParams, response: { 200: HoldoutSchema, 404: notFound } }), async (request) =>
      archiveHoldout(ctx, actorOf(request), request.params.id),
    );
  };
}

/** An experiment's holdouts and its opt-out. */
function experimentSideRoutes(ctx: HoldoutsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const experimentNotFound = problemDoc('no such experiment in this workspace');
    app.get(
      '/v1/experiments/:id/holdouts',
      route('getExperimentHoldouts', { params: ExperimentParams, response: { 200: ExperimentHoldouts, 404: experimentNotFound } }),
      async (request) => experimentHoldouts(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.put(
      '/v1/experiments/:id/holdout-opt-out',
      route('optOutOfHoldouts', {
        params: ExperimentParams,
        body: OptOutInput,
        response: {
          200: Type.Object({ reason: Type.String(), created_at: Timestamp }),
          404: experimentNotFound,
          409: problemDoc('the experiment is archived'),
        },
      }),
      async (request) => optOut(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/experiments/:id/holdout-opt-out',
      route('removeHoldoutOptOut', { params: ExperimentParams, response: { 204: EmptyBody, 404: problemDoc('no such experiment, or it has not opted out') } }),
      async (request, reply) => {
        await removeOptOut(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
