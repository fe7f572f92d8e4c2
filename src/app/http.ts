/**
 * The composition root's HTTP app: every slice's routes, in the order openapi.json lists them,
 * on the HTTP layer (http/app.ts), which knows no slice.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { UNIT_ID_MAX_PARAM_LENGTH } from '../features/assignment/unit-id.js';
import { createSlices, type Slices } from '../features/index.js';
import { requiredRole, roleTableMarkdown } from '../features/people/roles.js';
import { buildHttpApp } from '../http/app.js';

/** Each slice contributes one plugin; this list is the whole API, in the order openapi.json lists it. */
function features(slices: Slices) {
  return [
    slices.health.routes,
    slices.workspaces.routes,
    slices.environments.routes,
    slices.apiKeys.routes,
    slices.audit.routes,
    slices.events.routes,
    slices.metrics.routes,
    slices.segments.routes,
    slices.templates.routes,
    slices.renders.routes,
    slices.experiments.routes,
    slices.mutexGroups.routes,
    slices.holdouts.routes,
    slices.assignment.routes,
    slices.ofrep.routes,
    slices.webhookSources.routes,
    slices.webhookEndpoints.routes,
    slices.dataSources.routes,
    slices.inbound.routes,
    slices.leads.routes,
    slices.taskTool.routes,
    slices.analysis.routes,
    slices.planning.routes,
    slices.sharing.routes,
    slices.people.routes,
    slices.sessions.routes,
    slices.ui.routes,
    slices.observability.routes,
  ];
}

export function buildApp(ctx: AppContext, slices: Slices = createSlices(ctx)): Promise<FastifyInstance> {
  // Path parameters are bounded by the unit id rule (unit-id.ts), the longest one a route takes.
  return buildHttpApp(ctx, {
    routes: features(slices),
    sessions: slices.sessions.authenticator,
    maxParamLength: UNIT_ID_MAX_PARAM_LENGTH,
    roles: { requiredRole, tableMarkdown: roleTableMarkdown() },
  });
}
