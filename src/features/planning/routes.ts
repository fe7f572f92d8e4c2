import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { PlanningDeps } from './deps.js';
import { PlanningPowerInput, PlanningPowerSchema } from './schemas.js';
import { planPower } from './service.js';

const route = routeOptionsFor('planning');

/** Planning: how long an experiment must run, from the metric's history or a given baseline. */
export function planningRoutes(ctx: PlanningDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/planning/power',
      route('planExperimentPower', {
        body: PlanningPowerInput,
        response: {
          200: PlanningPowerSchema,
          422: problemDoc('a field is invalid, or a metric has no history to plan with (then give a baseline) or no traffic was seen (then give daily_units)'),
        },
      }),
      async (request) => planPower(ctx, principalOf(request).workspaceId, request.body),
    );
  };
}
