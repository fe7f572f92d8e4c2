import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../../http/auth.js';
import { routeOptionsFor } from '../../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../../http/schemas.js';
import type { ExperimentsDeps } from '../deps.js';
import { TemplateInput, TemplateList, TemplateListQuery, TemplateParams, TemplatePatch, TemplateSchema } from './schemas.js';
import { createTemplate, deleteTemplate, getTemplate, patchTemplate } from './service.js';
import { listTemplates } from './store.js';

const route = routeOptionsFor('experiments');
const notFound = problemDoc('no such experiment template in this workspace');

/** Saved definitions a new experiment starts from (POST /v1/experiments with template_id). */
export function templateRoutes(ctx: ExperimentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/experiment-templates',
      route('listExperimentTemplates', { querystring: TemplateListQuery, response: { 200: TemplateList } }),
      async (request) => listTemplates(ctx.db, principalOf(request).workspaceId, request.query),
    );
    app.post(
      '/v1/experiment-templates',
      route('createExperimentTemplate', {
        description:
          'Saves a template, from the fields given and, with from_experiment_id, an experiment’s definition. Audit-logged as experiment_template.created.',
        body: TemplateInput,
        response: { 201: TemplateSchema },
      }),
      async (request, reply) => reply.code(201).send(await createTemplate(ctx, actorOf(request), request.body)),
    );
    app.get(
      '/v1/experiment-templates/:id',
      route('getExperimentTemplate', { params: TemplateParams, response: { 200: TemplateSchema, 404: notFound } }),
      async (request) => getTemplate(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/experiment-templates/:id',
      route('updateExperimentTemplate', { params: TemplateParams, body: TemplatePatch, response: { 200: TemplateSchema, 404: notFound } }),
      async (request) => patchTemplate(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/experiment-templates/:id',
      route('deleteExperimentTemplate', {
        description: 'Experiments made from the template are copies and stay as they are.',
        params: TemplateParams,
        response: { 204: EmptyBody, 404: notFound },
      }),
      async (request, reply) => {
        await deleteTemplate(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
