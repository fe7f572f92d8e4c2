import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import { baseUrlFor } from '../people/routes.js';
import type { SharingDeps } from './deps.js';
import { exportHistoryCsv, exportLatestCsv, exportNotebook } from './exports.js';
import {
  CreatedShareLink,
  ExperimentParams,
  ExportQuery,
  HistoryExportQuery,
  ShareLinkInput,
  ShareLinkList,
  ShareLinkParams,
  SharedParams,
  SharedResults,
} from './schemas.js';
import { createShareLink, listExperimentShareLinks, revokeLink, viewShared } from './service.js';
import { SHARED_PAGE_CSP, sharedPage } from './shared-page.js';

const route = routeOptionsFor('sharing');
const noExperiment = problemDoc('no such experiment in this workspace, or it has no snapshot yet');
const CSV = Type.String({ description: 'text/csv; charset=utf-8, one header row then one row per metric and variant' });

/** A browser's navigation asks for text/html before JSON. */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}

export function sharingRoutes(ctx: SharingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(shareLinkRoutes(ctx));
    await app.register(exportRoutes(ctx));
  };
}

function shareLinkRoutes(ctx: SharingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/experiments/:id/share-links',
      route('createShareLink', {
        params: ExperimentParams,
        body: ShareLinkInput,
        response: { 201: CreatedShareLink, 404: problemDoc('no such experiment in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        const days = request.body.expires_in_days ?? 7;
        const created = await createShareLink(ctx, principal.workspaceId, principal.keyId, request.params.id, days, baseUrlFor(ctx, request));
        return reply.code(201).header('cache-control', 'no-store').send(created);
      },
    );

    app.get(
      '/v1/experiments/:id/share-links',
      route('listShareLinks', { params: ExperimentParams, response: { 200: ShareLinkList, 404: problemDoc('no such experiment in this workspace') } }),
      async (request) => listExperimentShareLinks(ctx, principalOf(request).workspaceId, request.params.id),
    );

    app.delete(
      '/v1/share-links/:id',
      route('revokeShareLink', { params: ShareLinkParams, response: { 204: EmptyBody, 404: problemDoc('no such share link in this workspace') } }),
      async (request, reply) => {
        const principal = principalOf(request);
        await revokeLink(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/shared/:token',
      route(
        'viewSharedResults',
        {
          params: SharedParams,
          response: { 200: SharedResults, 404: problemDoc('no such link, or no snapshot yet'), 410: problemDoc('the link was revoked or has expired') },
        },
        'public',
      ),
      async (request, reply) => {
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('vary', 'accept');
        const shared = await viewShared(ctx, request.params.token);
        // A browser opening the link gets a page; every other client the JSON (same status codes).
        if (!prefersHtml(request.headers.accept)) return shared;
        return reply
          .type('text/html; charset=utf-8')
          .header('content-security-policy', SHARED_PAGE_CSP)
          .send(sharedPage(shared.experiment, shared.results, shared.expires_at));
      },
    );
  };
}

function exportRoutes(ctx: SharingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/experiments/:id/results/export',
      route('exportResults', {
        params: ExperimentParams,
        querystring: ExportQuery,
        response: { 200: Type.Union([CSV, Type.Object({}, { additionalProperties: true })]), 404: noExperiment },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        if (request.query.format === 'notebook') return exportNotebook(ctx, principal.workspaceId, principal.keyId, request.params.id);
        const csv = await exportLatestCsv(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="results-${request.params.id}.csv"`).send(csv);
      },
    );

    app.get(
      '/v1/experiments/:id/results/history/export',
      route('exportResultsHistory', { params: ExperimentParams, querystring: HistoryExportQuery, response: { 200: CSV, 404: noExperiment } }),
      async (request, reply) => {
        const principal = principalOf(request);
        const csv = await exportHistoryCsv(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="results-history-${request.params.id}.csv"`).send(csv);
      },
    );
  };
}
