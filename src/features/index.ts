import type { AppContext } from '../context.js';
import { metricsRoutes } from '../observability/routes.js';
import { createAlerts } from './alerts/index.js';
import { createAnalysis } from './analysis/index.js';
import { reweightIfDue } from './bandits/reweight.js';
import { createApiKeys } from './api-keys/index.js';
import { createAssignment } from './assignment/index.js';
import { createAudit } from './audit/index.js';
import { createDataSources } from './data-sources/index.js';
import { createEnvironments } from './environments/index.js';
import { createEvents } from './events/index.js';
import { ingestEvents } from './events/service.js';
import { createExperiments } from './experiments/index.js';
import { createHealth } from './health/index.js';
import { createHoldouts } from './holdouts/index.js';
import { createInbound } from './inbound/index.js';
import { createLeads } from './leads/index.js';
import { createMetrics } from './metrics/index.js';
import { createMutexGroups } from './mutex-groups/index.js';
import { createOfrep } from './ofrep/index.js';
import { createPeople } from './people/index.js';
import { createPlanning } from './planning/index.js';
import { historyBaselineLookup } from './planning/warning-baselines.js';
import { createRenders } from './renders/index.js';
import { createSegments } from './segments/index.js';
import { createSessions } from './sessions/index.js';
import { createSharing } from './sharing/index.js';
import { createTaskTool } from './task-tool/index.js';
import { createTemplates } from './templates/index.js';
import { createUi } from './ui/index.js';
import { createWebhookEndpoints } from './webhook-endpoints/index.js';
import { createWebhookSources } from './webhook-sources/index.js';
import { createWorkspaces } from './workspaces/index.js';

/**
 * The composition root: every slice built once from the context, in dependency order, each given
 * only what its factory names (OFREP assigns through the assignment slice's Assigner; inbound
 * ingests through the events slice). The HTTP app registers their routes; the job handlers
 * register their jobs. Building a slice makes closures and caches only (no I/O). Slices that
 * others read expose read.ts; none reaches into another's store.ts.
 */
/**
 * Outbound webhooks, alerts and experiments, which know of each other only through functions:
 * alerts publish through the endpoints slice and stop experiments through the experiments slice,
 * which tells alerts of its starts and stops (the closure is only called once both exist).
 */
function createNotifyingSlices(ctx: AppContext) {
  const webhookEndpoints = createWebhookEndpoints(ctx);
  const alerts = createAlerts({
    config: ctx.config,
    clock: ctx.clock,
    publish: webhookEndpoints.publish,
    stopAutomatically: (trx, request) => experiments.stopAutomatically(trx, request),
  });
  const experiments = createExperiments({ ...ctx, lifecycle: alerts.onLifecycle, historyBaselines: historyBaselineLookup(ctx) });
  return { webhookEndpoints, alerts, experiments };
}

/** People and their sessions (the sessions slice signs persons in through the people slice), and sharing. */
function createPeopleSlices(ctx: AppContext, analysis: ReturnType<typeof createAnalysis>) {
  const people = createPeople(ctx);
  return { people, sessions: createSessions({ ...ctx, people: people.sessions }), sharing: createSharing({ ...ctx, results: analysis.results }) };
}

/** Inbound webhooks, which ingest through the events slice. */
function createInboundSlice(ctx: AppContext) {
  return createInbound({
    config: ctx.config,
    db: ctx.db,
    clock: ctx.clock,
    secrets: ctx.secrets,
    logger: ctx.logger,
    jobs: ctx.jobs,
    ingestEvents: (workspaceId, inputs) => ingestEvents(ctx, workspaceId, inputs),
  });
}

export function createSlices(ctx: AppContext) {
  const health = createHealth(ctx);
  const workspaces = createWorkspaces(ctx);
  const environments = createEnvironments(ctx);
  const apiKeys = createApiKeys(ctx);
  const audit = createAudit(ctx);
  const events = createEvents(ctx);
  const metrics = createMetrics(ctx);
  const segments = createSegments(ctx);
  const templates = createTemplates(ctx);
  const renders = createRenders(ctx);
  const { webhookEndpoints, alerts, experiments } = createNotifyingSlices(ctx);
  const mutexGroups = createMutexGroups(ctx);
  const holdouts = createHoldouts(ctx);
  const assignment = createAssignment(ctx);
  const ofrep = createOfrep({ db: ctx.db, assigner: assignment.assigner });
  const webhookSources = createWebhookSources(ctx);
  const dataSources = createDataSources(ctx);
  const inbound = createInboundSlice(ctx);
  const leads = createLeads(ctx);
  const taskTool = createTaskTool(ctx);
  const analysis = createAnalysis({ ...ctx, onSnapshot: alerts.onSnapshot, reweightIfDue: (row) => reweightIfDue(ctx, row) });
  const ui = createUi();
  const observability = { routes: metricsRoutes(ctx) };
  return {
    health,
    workspaces,
    environments,
    apiKeys,
    audit,
    events,
    metrics,
    segments,
    templates,
    renders,
    experiments,
    mutexGroups,
    holdouts,
    assignment,
    ofrep,
    webhookSources,
    webhookEndpoints,
    dataSources,
    alerts,
    inbound,
    leads,
    taskTool,
    analysis,
    planning: createPlanning(ctx),
    ...createPeopleSlices(ctx, analysis),
    ui,
    observability,
  };
}

export type Slices = ReturnType<typeof createSlices>;
