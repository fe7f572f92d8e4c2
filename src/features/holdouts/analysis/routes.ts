import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../../http/auth.js';
import { routeOptionsFor } from '../../../http/route-options.js';
import { problemDoc } from '../../../http/schemas.js';
import type { HoldoutsDeps } from '../deps.js';
import { HoldoutParams } from '../schemas.js';
import { HoldoutSnapshotSchema } from './schemas.js';
import { computeHoldoutSnapshot, latestHoldoutResults } from './service.js';

const route = routeOptionsFor('holdouts');

/** A holdout's own analysis: compute a snapshot now, read the latest. */
export function holdoutResultsRoutes(ctx: HoldoutsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/holdouts/:id/results',
      route('getHoldoutResults', {
        description: 'The latest snapshot of the holdout: its held-out units against an equal-size sample of the covered population.',
        params: HoldoutParams,
        response: { 200: HoldoutSnapshotSchema, 404: problemDoc('no such holdout, or no snapshot computed yet') },
      }),
      async (request) => latestHoldoutResults(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.post(
      '/v1/holdouts/:id/results/compute',
      route('computeHoldoutResults', {
        description:
          'Computes and stores a snapshot of the holdout now: each of its metric_ids on the held-out units against the sample, counted from each unit’s first contact to the holdout’s end, with the covered experiments and their launches. Audit-logged (holdout.results_computed).',
        params: HoldoutParams,
        response: {
          201: HoldoutSnapshotSchema,
          404: problemDoc('no such holdout in this workspace'),
          409: problemDoc('the holdout has not started, or the analysis store cannot compute it'),
          422: problemDoc('a metric’s window is longer than the holdout has run'),
        },
      }),
      async (request, reply) => reply.code(201).send(await computeHoldoutSnapshot(ctx, actorOf(request), request.params.id)),
    );
  };
}
