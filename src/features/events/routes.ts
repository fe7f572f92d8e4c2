import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { validatorCompiler } from '../../http/validation.js';
import type { EventsDeps } from './deps.js';
import { EventAck, EventBatchAck, EventBatchEnvelope, EventBatchInput, EventBufferStatus, EventInput, MAX_BATCH_EVENTS } from './schemas.js';
import { bufferStatus, trackBatch, trackEvent } from './service.js';

const route = routeOptionsFor('events', 'client');

/** A full batch may carry 500 events of up to 16 KB of properties each. */
const BATCH_BODY_LIMIT = 10 * 1024 * 1024;

const ingestProblems = {
  429: problemDoc('more than the configured number of events (default 100000) wait to be stored; see Retry-After'),
  503: problemDoc('the event buffer (database or Redis) cannot be reached; nothing was stored'),
};

const validateEnvelope = validatorCompiler({ schema: EventBatchEnvelope, httpPart: 'body', method: 'POST', url: '/v1/events/batch' });

export function eventRoutes(ctx: EventsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/events',
      route('trackEvent', {
        description: 'Validates, de-duplicates on client_event_id and durably buffers one event; it is stored shortly after the 202.',
        body: EventInput,
        response: { 202: EventAck, 412: problemDoc('occurred_at is more than 30 days old'), ...ingestProblems },
      }),
      async (request, reply) => {
        const ack = await trackEvent(ctx, principalOf(request).workspaceId, request.body);
        return reply.code(202).send(ack);
      },
    );

    app.post(
      '/v1/events/batch',
      {
        ...route('trackEventBatch', {
          description: `1 to ${MAX_BATCH_EVENTS} events; each is accepted or listed in \`rejected\` with its index and reason.`,
          body: EventBatchInput,
          response: { 202: EventBatchAck, ...ingestProblems },
        }),
        bodyLimit: Math.max(ctx.config.bodyLimit, BATCH_BODY_LIMIT),
        // Documented as an array of EventInput, validated as an envelope only: each event is
        // checked on its own and a bad one is listed in `rejected`.
        validatorCompiler: () => validateEnvelope,
      },
      async (request, reply) => {
        const ack = await trackBatch(ctx, principalOf(request).workspaceId, request.body.events as unknown[]);
        return reply.code(202).send(ack);
      },
    );

    app.get(
      '/v1/events/buffer',
      route(
        'getEventBufferStatus',
        {
          description: 'How many acknowledged events wait to be stored (all workspaces: the buffer is shared), for operators.',
          response: { 200: EventBufferStatus, 503: problemDoc('the event buffer cannot be reached') },
        },
        'server',
      ),
      async () => bufferStatus(ctx),
    );
  };
}
