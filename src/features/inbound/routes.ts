import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { InboundDeps } from './deps.js';
import { acceptRawBodies, rawBodyOf, rawBodyValidatorCompiler } from './raw-body.js';
import { InboundAck, InboundBody, InboundHeaders, InboundParams } from './schemas.js';
import { receiveInbound } from './service.js';

const route = routeOptionsFor('webhooks', 'public');

/** 500 events of up to 16 KB each fit, as on /v1/events/batch. */
const INBOUND_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * POST /webhooks/inbound/{workspace_id}/{source_slug}. Public: the sender authenticates with
 * the X-Service-Signature HMAC of the source secret, checked over the raw bytes. This plugin
 * parses no JSON itself; the handler reads the body after verifying it.
 */
export function inboundRoutes(ctx: InboundDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptRawBodies(app);
    app.post(
      '/webhooks/inbound/:workspace_id/:source_slug',
      {
        ...route('receiveInboundWebhook', {
          description:
            'Signed delivery from a webhook source (see docs/webhooks.md). Events flow into the same pipeline as /v1/events. ' +
            'A repeated Idempotency-Key within 24 hours answers the original 202 with `Idempotent-Replayed: true` and ingests nothing.',
          params: InboundParams,
          headers: InboundHeaders,
          body: InboundBody,
          response: {
            202: InboundAck,
            400: problemDoc('the body is not JSON'),
            401: problemDoc('X-Service-Signature missing, malformed, expired, in the future or not matching; `detail` says which'),
            404: problemDoc('unknown workspace or source slug'),
            409: problemDoc('the source is disabled, or the first request with this Idempotency-Key is still in flight'),
            412: problemDoc('a single event whose occurred_at is more than 30 days old'),
            422: problemDoc('not one event or {events: [...]}; Idempotency-Key over 64 characters or reused with a different body'),
            429: problemDoc('the event buffer is full; see Retry-After'),
            503: problemDoc('the event buffer cannot be reached; nothing was stored'),
          },
        }),
        bodyLimit: Math.max(ctx.config.bodyLimit, INBOUND_BODY_LIMIT),
        validatorCompiler: rawBodyValidatorCompiler,
      },
      async (request, reply) => {
        const result = await receiveInbound(ctx, {
          workspaceId: request.params.workspace_id,
          sourceSlug: request.params.source_slug,
          signature: request.headers['x-service-signature'],
          idempotencyKey: request.headers['idempotency-key'],
          rawBody: rawBodyOf(request),
        });
        if (result.replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(result.status).send(result.body);
      },
    );
  };
}
