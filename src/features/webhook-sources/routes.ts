import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { listDeliveries } from './deliveries.js';
import type { WebhookSourcesDeps } from './deps.js';
import {
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookSourceInput,
  WebhookSourceList,
  WebhookSourceListQuery,
  WebhookSourceParams,
  WebhookSourcePatch,
  WebhookSourceSchema,
  WebhookSourceWithSecret,
} from './schemas.js';
import { createWebhookSource, getWebhookSource, patchWebhookSource, rotateWebhookSourceSecret } from './service.js';
import { listWebhookSources } from './store.js';

const route = routeOptionsFor('webhooks');
const notFound = problemDoc('no such webhook source in this workspace');
const slugTaken = problemDoc('the slug is taken in this workspace');

export function webhookSourceRoutes(ctx: WebhookSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(sourceCollectionRoutes(ctx));
    await app.register(sourceItemRoutes(ctx));
  };
}

/** List, create, and the deliveries of one source. */
function sourceCollectionRoutes(ctx: WebhookSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/webhook-sources',
      route('listWebhookSources', { querystring: WebhookSourceListQuery, response: { 200: WebhookSourceList } }),
      async (request) => listWebhookSources(ctx.db, principalOf(request).workspaceId, request.query, ctx.clock.now()),
    );

    app.post(
      '/v1/webhook-sources',
      route('createWebhookSource', {
        description: 'Creates a source and returns its inbound_secret, the only time besides a rotation that it is shown.',
        body: WebhookSourceInput,
        response: { 201: WebhookSourceWithSecret, 409: slugTaken },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createWebhookSource(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );

    app.get(
      '/v1/webhook-sources/:id/deliveries',
      route('listWebhookDeliveries', {
        description: 'Posts to the source’s inbound URL with their outcome, newest first (kept 30 days).',
        params: WebhookSourceParams,
        querystring: WebhookDeliveryListQuery,
        response: { 200: WebhookDeliveryList, 404: notFound },
      }),
      async (request) => {
        const { workspaceId } = principalOf(request);
        await getWebhookSource(ctx, workspaceId, request.params.id);
        const { outcome, ...page } = request.query;
        return listDeliveries(ctx.db, workspaceId, request.params.id, outcome ? { outcome } : {}, page);
      },
    );
  };
}

/** Read, edit and rotate one source. */
function sourceItemRoutes(ctx: WebhookSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/webhook-sources/:id',
      route('getWebhookSource', { params: WebhookSourceParams, response: { 200: WebhookSourceSchema, 404: notFound } }),
      async (request) => getWebhookSource(ctx, principalOf(request).workspaceId, request.params.id),
    );

    app.patch(
      '/v1/webhook-sources/:id',
      route('updateWebhookSource', {
        description: 'Changes slug (and so the inbound URL), name or enabled. An unchanged body changes nothing and logs nothing.',
        params: WebhookSourceParams,
        body: WebhookSourcePatch,
        response: { 200: WebhookSourceSchema, 404: notFound, 409: slugTaken },
      }),
      async (request) => {
        const principal = principalOf(request);
        return patchWebhookSource(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );

    app.post(
      '/v1/webhook-sources/:id/rotate-secret',
      route('rotateWebhookSourceSecret', {
        description: 'Issues a new inbound_secret (returned once). The previous secret keeps verifying for 24 hours.',
        params: WebhookSourceParams,
        response: { 200: WebhookSourceWithSecret, 404: notFound },
      }),
      async (request) => {
        const principal = principalOf(request);
        return rotateWebhookSourceSecret(ctx, principal.workspaceId, principal.keyId, request.params.id);
      },
    );
  };
}
