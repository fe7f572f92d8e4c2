import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { Assigner } from './assigner.js';
import type { AssignmentDeps } from './deps.js';
import {
  AssignBatchInput,
  AssignBatchResult,
  AssignInput,
  AssignmentList,
  AssignmentSchema,
  ExposureInput,
  OverrideInput,
  OverrideParams,
  OverrideSchema,
  RebucketParams,
  UnitParams,
  type Assignment,
} from './schemas.js';
import { listAssignmentsOfUnit, rebucket, removeOverride, setOverride } from './service.js';

const route = routeOptionsFor('assignment', 'client');

/** 202 with an empty body, as the interface specifies for exposures. */
const AcceptedNoBody = { description: 'accepted; no body' };

const notRunning = problemDoc('no running experiment with this key (in the key’s environment)');

export function assignmentRoutes(ctx: AssignmentDeps, assigner: Assigner): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(sdkRoutes(assigner));
    await app.register(adminRoutes(ctx));
  };
}

/** What SDKs call with client keys: assign, assign in batch, log an exposure. */
function sdkRoutes(assigner: Assigner): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/assign',
      route('assign', {
        description: 'Sticky assignment: the first call stores the variant and logs one exposure; later calls return the stored result.',
        body: AssignInput,
        response: { 200: AssignmentSchema, 404: notRunning },
      }),
      // Not async: a cached answer is sent without a promise (Assigner.answer).
      (request, reply) => {
        const answer = assigner.answer(principalOf(request), request.body);
        if (answer instanceof Promise) return answer;
        reply.send(answer);
        return undefined;
      },
    );

    app.post('/v1/assign/batch', route('assignBatch', { body: AssignBatchInput, response: { 200: AssignBatchResult } }), async (request) => {
      const { assigned, notFound } = await assigner.assignMany(principalOf(request), request.body.experiments, request.body);
      const assignments: Record<string, Assignment> = {};
      for (const { key, assignment } of assigned) assignments[key] = assignment;
      return { assignments, not_found: notFound };
    });

    app.post(
      '/v1/exposures',
      route('logExposure', {
        description: 'Logs the exposure of an assignment made with log_exposure false. Repeats are ignored.',
        body: ExposureInput,
        response: { 202: AcceptedNoBody, 404: notRunning, 409: problemDoc('the unit has no assignment, or a different variant') },
      }),
      async (request, reply) => {
        await assigner.logExposure(principalOf(request), request.body);
        return reply.code(202).send();
      },
    );
  };
}

/** Server-key operations on stored assignments and QA overrides. */
function adminRoutes(ctx: AssignmentDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/assignments/:unit_id', route('listUnitAssignments', { params: UnitParams, response: { 200: AssignmentList } }, 'server'), async (request) =>
      listAssignmentsOfUnit(ctx, principalOf(request).workspaceId, request.params.unit_id),
    );

    app.delete(
      '/v1/assignments/:experiment/:unit_id',
      route(
        'rebucketUnit',
        {
          description: 'Forced re-bucket: deletes the assignment and marks the pair’s exposures superseded (ignored by analysis). Audited. For rare use.',
          params: RebucketParams,
          response: { 204: EmptyBody, 404: problemDoc('no such experiment, or the unit has no assignment in it') },
        },
        'server',
      ),
      async (request, reply) => {
        await rebucket(ctx, actorOf(request), request.params.experiment, request.params.unit_id);
        return reply.code(204).send(null);
      },
    );

    app.put(
      '/v1/experiments/:id/overrides/:unit_id',
      route(
        'setOverride',
        {
          description: 'Pins a unit to a variant for QA: assign answers it with reason "forced". Forced units log no exposure.',
          params: OverrideParams,
          body: OverrideInput,
          response: { 200: OverrideSchema, 404: problemDoc('no such experiment'), 409: problemDoc('the experiment is archived') },
        },
        'server',
      ),
      async (request) => setOverride(ctx, actorOf(request), request.params.id, request.params.unit_id, request.body.variant),
    );

    app.delete(
      '/v1/experiments/:id/overrides/:unit_id',
      route('removeOverride', { params: OverrideParams, response: { 204: EmptyBody, 404: problemDoc('no such experiment or override') } }, 'server'),
      async (request, reply) => {
        await removeOverride(ctx, actorOf(request), request.params.id, request.params.unit_id);
        return reply.code(204).send(null);
      },
    );
  };
}
