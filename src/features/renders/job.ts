import type { AppContext } from '../../context.js';
import type { RenderFormat } from '../../db/tables/templates.js';
import type { JobContext } from '../../jobs/registry.js';
import { findVersion } from '../templates/store.js';
import { RenderError } from '../templates/helpers.js';
import { renderDocument } from './document.js';
import { RENDER_JOB } from './job-name.js';
import { failRender, markRunning, resolveRender } from './store.js';

function renderIdOf(payload: unknown): string {
  const id = typeof payload === 'object' && payload !== null ? (payload as { render_id?: unknown }).render_id : undefined;
  if (typeof id !== 'string') throw new Error('templates.render needs a payload {render_id}');
  return id;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * queued -> running -> resolved | failed. A failure of the template or its data is final (the
 * same input fails the same way); a storage failure is retried by the queue, and the render
 * fails with the reason once the job's attempts are used up.
 */
export async function runRenderJob(ctx: AppContext, payload: unknown, { job, logger }: JobContext): Promise<void> {
  const renderId = renderIdOf(payload);
  const render = await markRunning(ctx.db, renderId, ctx.clock.now());
  if (!render) return;
  try {
    const version = await findVersion(ctx.db, render.workspace_id, render.template_id, render.version_seq);
    if (!version) throw new RenderError(`version ${render.version_label} of template ${render.template_id} is missing`);
    const outputs = await renderDocument({
      body: version.body_snapshot,
      data: JSON.parse(render.data) as unknown,
      formats: JSON.parse(render.formats) as RenderFormat[],
      createdAt: render.created_at,
    });
    await resolveRender(ctx.db, renderId, outputs, ctx.clock.now());
  } catch (error) {
    const final = error instanceof RenderError || job.attempts >= job.max_attempts;
    if (!final) throw error;
    logger.warn({ err: error, render_id: renderId }, 'render failed');
    await failRender(ctx.db, renderId, describe(error), ctx.clock.now());
  }
}

/** Wires the template feature's background work into the queue (called from jobs/handlers.ts). */
export function registerTemplateJobs(ctx: AppContext): void {
  ctx.jobs.register(RENDER_JOB, (payload, context) => runRenderJob(ctx, payload, context));
}
