import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { TemplatesDeps } from './deps.js';
import {
  TemplateInput,
  TemplateList,
  TemplateListQuery,
  TemplateParams,
  TemplatePatch,
  TemplateSchema,
  TemplateVersionList,
  TemplateVersionSchema,
  VersionParams,
} from './schemas.js';
import { createTemplate, deleteTemplate, editTemplate, freezeVersion, getTemplate, getVersion, requireTemplateWithVersions } from './service.js';
import { listTemplates, listVersions } from './store.js';

const route = routeOptionsFor('templates');
const notFound = problemDoc('no such template in this workspace (or it was deleted)');

export function templateRoutes(ctx: TemplatesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    readRoutes(ctx, app);

    app.post(
      '/v1/templates',
      route('createTemplate', {
        description: 'Creates a draft. A body that does not compile answers 422 with the line and column.',
        body: TemplateInput,
        response: { 201: TemplateSchema },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        const template = await createTemplate(ctx, principal.workspaceId, principal.keyId, request.body);
        return reply.code(201).header('location', `/v1/templates/${template.id}`).send(template);
      },
    );

    app.patch(
      '/v1/templates/:id',
      route('updateTemplate', {
        description: 'Edits the draft; versions never change.',
        params: TemplateParams,
        body: TemplatePatch,
        response: { 200: TemplateSchema, 404: notFound },
      }),
      async (request) => {
        const principal = principalOf(request);
        return editTemplate(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );

    app.delete(
      '/v1/templates/:id',
      route('deleteTemplate', {
        description: 'Deletes the draft. Its versions stay readable and renderable.',
        params: TemplateParams,
        response: { 204: EmptyBody, 404: notFound },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        await deleteTemplate(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    versionRoutes(ctx, app);
  };
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];

function readRoutes(ctx: TemplatesDeps, app: App): void {
  app.get('/v1/templates', route('listTemplates', { querystring: TemplateListQuery, response: { 200: TemplateList } }), async (request) =>
    listTemplates(ctx.db, principalOf(request).workspaceId, request.query),
  );

  app.get('/v1/templates/:id', route('getTemplate', { params: TemplateParams, response: { 200: TemplateSchema, 404: notFound } }), async (request) =>
    getTemplate(ctx, principalOf(request).workspaceId, request.params.id),
  );
}

function versionRoutes(ctx: TemplatesDeps, app: App): void {
  app.post(
    '/v1/templates/:id/versions',
    route('freezeTemplateVersion', {
      description: 'Freezes the current draft as the next version (v1, v2, ...): body, fields schema and label are captured together.',
      params: TemplateParams,
      response: { 201: TemplateVersionSchema, 404: notFound, 409: problemDoc('the draft no longer compiles (the helper set changed since it was saved)') },
    }),
    async (request, reply) => {
      const principal = principalOf(request);
      const version = await freezeVersion(ctx, principal.workspaceId, principal.keyId, request.params.id);
      return reply.code(201).header('location', `/v1/templates/${version.template_id}/versions/${version.label}`).send(version);
    },
  );

  app.get(
    '/v1/templates/:id/versions',
    route('listTemplateVersions', {
      description: 'Also after the template was deleted.',
      params: TemplateParams,
      querystring: TemplateListQuery,
      response: { 200: TemplateVersionList, 404: notFound },
    }),
    async (request) => {
      const { workspaceId } = principalOf(request);
      await requireTemplateWithVersions(ctx, workspaceId, request.params.id);
      return listVersions(ctx.db, workspaceId, request.params.id, request.query);
    },
  );

  app.get(
    '/v1/templates/:id/versions/:label',
    route('getTemplateVersion', {
      description: 'Also after the template was deleted.',
      params: VersionParams,
      response: { 200: TemplateVersionSchema, 404: problemDoc('no such template or version') },
    }),
    async (request) => getVersion(ctx, principalOf(request).workspaceId, request.params.id, request.params.label),
  );
}
