import type { AppContext } from '../context.js';
import { metricsRoutes } from '../observability/routes.js';
import { createApiKeys } from './api-keys/index.js';
import { createAudit } from './audit/index.js';
import { ingestEvents } from './events/service.js';
import { createHealth } from './health/index.js';
import { createInbound } from './inbound/index.js';
import { createLeads } from './leads/index.js';
import { createRenders } from './renders/index.js';
import { createSessions } from './sessions/index.js';
import { createTaskTool } from './task-tool/index.js';
import { createTemplates } from './templates/index.js';
import { createUi } from './ui/index.js';
import { createWebhookSources } from './webhook-sources/index.js';
import { createWorkspaces } from './workspaces/index.js';

/**
 * The composition root: every slice built once from the context, each given only what its
 * factory names. The HTTP app registers their routes; the job handlers register their jobs.
 * Building a slice makes closures only (no I/O), so the server and the worker may each build one.
 */
export function createSlices(ctx: AppContext) {
  const health = createHealth(ctx);
  const workspaces = createWorkspaces(ctx);
  const apiKeys = createApiKeys(ctx);
  const audit = createAudit(ctx);
  const templates = createTemplates(ctx);
  const renders = createRenders(ctx);
  const webhookSources = createWebhookSources(ctx);
  const inbound = createInbound({
    config: ctx.config,
    db: ctx.db,
    clock: ctx.clock,
    secrets: ctx.secrets,
    logger: ctx.logger,
    jobs: ctx.jobs,
    ingestEvents: (workspaceId, inputs) => ingestEvents(ctx, workspaceId, inputs),
  });
  const leads = createLeads(ctx);
  const taskTool = createTaskTool(ctx);
  const sessions = createSessions(ctx);
  const ui = createUi();
  const observability = { routes: metricsRoutes(ctx) };
  return { health, workspaces, apiKeys, audit, templates, renders, webhookSources, inbound, leads, taskTool, sessions, ui, observability };
}

export type Slices = ReturnType<typeof createSlices>;
