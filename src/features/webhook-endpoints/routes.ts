import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { WebhookEndpointsDeps } from './deps.js';
import {
  EndpointDeliveryList,
  EndpointDeliveryListQuery,
  EndpointDeliveryParams,
  EndpointDeliverySchema,
  WebhookEndpointInput,
  WebhookEndpointList,
  WebhookEndpointListQuery,
  WebhookEndpointParams,
  WebhookEndpointPatch,
  WebhookEndpointSchema,
  WebhookEndpointWithSecret,
  WebhookEndpointWritten,
} from './schemas.js';
import { createEndpoint, getEndpoint, patchEndpoint, pingEndpoint, redeliver, removeEndpoint, rotateEndpointSecret } from './service.js';
import { listDeliveries, listEndpoints } from './store.js';

const route = routeOptionsFor('webhooks');
const notFound = problemDoc('no such webhook endpoint in this workspace');
const disabled = problemDoc('the endpoint is disabled');

export function webhookEndpointRoutes(ctx: WebhookEndpointsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(endpointRoutes(ctx));
    await app.register(deliveryRoutes(ctx));
  };
}

/** Create, list, read, edit, delete and rotate. */
function endpointRoutes(ctx: WebhookEndpointsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/webhook-endpoints',
      route('listWebhookEndpoints', { querystring: WebhookEndpointListQuery, response: { 200: WebhookEndpointList } }),
      async (request) => listEndpoints(ctx.db, principalOf(request).workspaceId, request.query, ctx.clock.now()),
    );
    app.post(
      '/v1/webhook-endpoints',
      route('createWebhookEndpoint', {
        description:
          'Creates an endpoint and returns its signing secret, the only time besides a rotation that it is shown, and its whole URL, the only time it is shown (elsewhere it is masked). A URL whose host is (or resolves to) a private address is saved with a warning: deliveries to it are refused unless VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1. 409 when the workspace has VERDICT_WEBHOOK_MAX_ENDPOINTS endpoints already.',
        body: WebhookEndpointInput,
        response: { 201: WebhookEndpointWithSecret, 409: problemDoc('the workspace has as many endpoints as it may (VERDICT_WEBHOOK_MAX_ENDPOINTS)') },
      }),
      async (request, reply) => reply.code(201).send(await createEndpoint(ctx, actorOf(request), request.body)),
    );
    app.get(
      '/v1/webhook-endpoints/:id',
      route('getWebhookEndpoint', { params: WebhookEndpointParams, response: { 200: WebhookEndpointSchema, 404: notFound } }),
      async (request) => getEndpoint(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/webhook-endpoints/:id',
      route('updateWebhookEndpoint', {
        description: 'Changes url, description, event_types, enabled, format or experiment_ids. An unchanged body changes nothing and logs nothing.',
        params: WebhookEndpointParams,
        body: WebhookEndpointPatch,
        response: { 200: WebhookEndpointWritten, 404: notFound },
      }),
      async (request) => patchEndpoint(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/webhook-endpoints/:id',
      route('deleteWebhookEndpoint', {
        description: 'Deletes the endpoint and its delivery log; attempts not yet made are not made.',
        params: WebhookEndpointParams,
        response: { 204: EmptyBody, 404: notFound },
      }),
      async (request, reply) => {
        await removeEndpoint(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/webhook-endpoints/:id/rotate-secret',
      route('rotateWebhookEndpointSecret', {
        description: 'Issues a new secret (returned once). For 24 hours deliveries carry two v1 signatures, one per secret.',
        params: WebhookEndpointParams,
        response: { 200: WebhookEndpointWithSecret, 404: notFound },
      }),
      async (request) => rotateEndpointSecret(ctx, actorOf(request), request.params.id),
    );
  };
}

/** The delivery log, redelivery and the test ping. */
function deliveryRoutes(ctx: WebhookEndpointsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/webhook-endpoints/:id/deliveries',
      route('listWebhookEndpointDeliveries', {
        description: 'Events sent (or being sent) to the endpoint with the state of their attempts, newest first.',
        params: WebhookEndpointParams,
        querystring: EndpointDeliveryListQuery,
        response: { 200: EndpointDeliveryList, 404: notFound },
      }),
      async (request) => {
        const { workspaceId } = principalOf(request);
        await getEndpoint(ctx, workspaceId, request.params.id);
        const { status, ...page } = request.query;
        return listDeliveries(ctx.db, workspaceId, request.params.id, status, page);
      },
    );
    app.post(
      '/v1/webhook-endpoints/:id/deliveries/:deliveryId/redeliver',
      route('redeliverWebhookEndpointDelivery', {
        description: 'Sends a finished delivery again now: the same body and event id, with a new attempt number. 409 while an attempt is scheduled.',
        params: EndpointDeliveryParams,
        response: { 202: EndpointDeliverySchema, 404: notFound, 409: problemDoc('an attempt is already scheduled, or the endpoint is disabled') },
      }),
      async (request, reply) => reply.code(202).send(await redeliver(ctx, actorOf(request), request.params.id, request.params.deliveryId)),
    );
    app.post(
      '/v1/webhook-endpoints/:id/test',
      route('testWebhookEndpoint', {
        description: 'Sends a `ping` event to this endpoint (whatever its event types) and returns its delivery.',
        params: WebhookEndpointParams,
        response: { 202: EndpointDeliverySchema, 404: notFound, 409: disabled },
      }),
      async (request, reply) => reply.code(202).send(await pingEndpoint(ctx, actorOf(request), request.params.id)),
    );
  };
}
