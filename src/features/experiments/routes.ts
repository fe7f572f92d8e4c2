import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { ExperimentsDeps } from './deps.js';
import type { Experiment } from './schemas.js';
import {
  DuplicateExperimentInput,
  ExperimentCreateInput,
  ExperimentList,
  ExperimentListQuery,
  ExperimentParams,
  ExperimentPatch,
  ExperimentSchema,
  StopExperimentInput,
} from './schemas.js';
import { duplicateExperiment } from './duplicate.js';
import { archiveExperiment, createExperiment, getExperiment, patchExperiment, startExperiment, stopExperiment } from './service.js';
import { listExperiments } from './store.js';
import { withPlanningWarning, withPlanningWarnings } from './planning.js';
import { LaunchExperimentInput, launchExperiment } from './launch.js';
import { tagFilter } from './labels.js';
import { applyTemplate } from './templates/apply.js';
import { templateRoutes } from './templates/routes.js';

/** A page of experiments with their warnings computed against their primary metrics' kinds. */
async function withPlanningWarningsOnPage<T extends { data: Experiment[] }>(ctx: ExperimentsDeps, page: T): Promise<T> {
  return { ...page, data: await withPlanningWarnings(ctx.db, page.data, ctx.historyBaselines) };
}

const route = routeOptionsFor('experiments');
const notFound = problemDoc('no such experiment in this workspace');
const conflict = problemDoc('the lifecycle does not allow this change now');

export function experimentRoutes(ctx: ExperimentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(definitionRoutes(ctx));
    await app.register(lifecycleRoutes(ctx));
    await app.register(templateRoutes(ctx));
  };
}

/** Create, read, list and edit. */
function definitionRoutes(ctx: ExperimentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/experiments', route('listExperiments', { querystring: ExperimentListQuery, response: { 200: ExperimentList } }), async (request) =>
      withPlanningWarningsOnPage(
        ctx,
        await listExperiments(ctx.db, ctx.seam, principalOf(request).workspaceId, { ...request.query, tags: tagFilter(request.query.tag) }, request.query),
      ),
    );
    app.post(
      '/v1/experiments',
      route('createExperiment', {
        description:
          'Creates a draft. With template_id, the template’s fields fill those the body leaves out (audit entry: template). Without owner, one created from a signed-in admin UI session is owned by the person signed in.',
        body: ExperimentCreateInput,
        response: { 201: ExperimentSchema, 409: problemDoc('the key is taken') },
      }),
      async (request, reply) => {
        const actor = { ...actorOf(request), userId: principalOf(request).user?.id };
        const { input, origin } = await applyTemplate(ctx.db, actor.workspaceId, request.body);
        return reply.code(201).send(await withPlanningWarning(ctx.db, await createExperiment(ctx, actor, input, origin), ctx.historyBaselines));
      },
    );
    app.post(
      '/v1/experiments/:id/duplicate',
      route('duplicateExperiment', {
        description:
          'Creates a draft with the definition of this experiment (variants at their starting weights, metrics, rule, allocation, audience, dimensions, auto-stop) under a new key; its results and lifecycle are not copied. Audit-logged as experiment.created with duplicated_from.',
        params: ExperimentParams,
        body: DuplicateExperimentInput,
        response: { 201: ExperimentSchema, 404: notFound, 409: problemDoc('the key is taken') },
      }),
      async (request, reply) =>
        reply.code(201).send(await withPlanningWarning(ctx.db, await duplicateExperiment(ctx, actorOf(request), request.params.id, request.body))),
    );
    app.get('/v1/experiments/:id', route('getExperiment', { params: ExperimentParams, response: { 200: ExperimentSchema, 404: notFound } }), async (request) =>
      withPlanningWarning(ctx.db, await getExperiment(ctx, principalOf(request).workspaceId, request.params.id), ctx.historyBaselines),
    );
    app.patch(
      '/v1/experiments/:id',
      route('updateExperiment', {
        description:
          'Drafts change freely; running experiments only name, hypothesis, audience, decision_rule and weights; stopped and archived ones not at all (409).',
        params: ExperimentParams,
        body: ExperimentPatch,
        response: { 200: ExperimentSchema, 404: notFound, 409: conflict },
      }),
      async (request) => withPlanningWarning(ctx.db, await patchExperiment(ctx, actorOf(request), request.params.id, request.body), ctx.historyBaselines),
    );
  };
}

/** draft -> running -> stopped, and archive from anything. */
function lifecycleRoutes(ctx: ExperimentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.delete(
      '/v1/experiments/:id',
      route('archiveExperiment', {
        description: 'Archives from any status; idempotent.',
        params: ExperimentParams,
        response: { 204: EmptyBody, 404: notFound },
      }),
      async (request, reply) => {
        await archiveExperiment(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/experiments/:id/start',
      route('startExperiment', { params: ExperimentParams, response: { 200: ExperimentSchema, 404: notFound, 409: conflict } }),
      async (request) =>
        withPlanningWarning(
          ctx.db,
          await startExperiment(ctx, { ...actorOf(request), via: principalOf(request).via }, request.params.id),
          ctx.historyBaselines,
        ),
    );
    app.post(
      '/v1/experiments/:id/stop',
      route('stopExperiment', { params: ExperimentParams, body: StopExperimentInput, response: { 200: ExperimentSchema, 404: notFound, 409: conflict } }),
      async (request) =>
        withPlanningWarning(
          ctx.db,
          await stopExperiment(ctx, { ...actorOf(request), via: principalOf(request).via }, request.params.id, request.body),
          ctx.historyBaselines,
        ),
    );
    app.post(
      '/v1/experiments/:id/launch',
      route('launchExperiment', {
        params: ExperimentParams,
        body: LaunchExperimentInput,
        response: { 200: ExperimentSchema, 404: notFound, 409: conflict, 422: problemDoc('the experiment has no variant with this key') },
      }),
      async (request) => withPlanningWarning(ctx.db, await launchExperiment(ctx, actorOf(request), request.params.id, request.body)),
    );
  };
}
