import type { RenderFormat } from '../../db/tables/templates.js';
import type { Executor } from '../../db/database.js';
import type { JobContext, JobFailure } from '../../jobs/registry.js';
import { findVersion } from '../templates/read.js';
import { RenderError } from '../templates/helpers.js';
import { renderDocument } from './document.js';
import type { RendersDeps } from './deps.js';
import { RENDER_JOB } from './job-name.js';
import { failRender, markRunning, resolveRender } from './store.js';

function renderIdOf(payload: unknown): string | undefined {
  const id = typeof payload === 'object' && payload !== null ? (payload as { render_id?: unknown }).render_id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/**
 * queued -> running -> resolved | failed. A failure of the template or its data is final (the
 * same input fails the same way), so it fails the render at once. Any other failure (storage) is
 * thrown to the queue, which retries it; once the job fails for good, however that happens
 * (including workers lost on every attempt), failRenderOfJob fails the render with the reason.
 */
export async function runRenderJob(ctx: RendersDeps, payload: unknown, { logger }: JobContext): Promise<void> {
  const renderId = renderIdOf(payload);
  if (!renderId) throw new Error('templates.render needs a payload {render_id}');
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
    if (!(error instanceof RenderError)) throw error;
    logger.warn({ err: error, render_id: renderId }, 'render failed');
    await failRender(ctx.db, renderId, error.message, ctx.clock.now());
  }
}

/** The render job's failure hook: runs in the transaction that fails the job for good. */
async function failRenderOfJob(ctx: RendersDeps, trx: Executor, { payload, reason }: JobFailure): Promise<void> {
  const renderId = renderIdOf(payload);
  if (renderId) await failRender(trx, renderId, `the render job failed: ${reason}`, ctx.clock.now());
}

/** Wires the template feature's background work into the queue (called from app/jobs.ts). */
export function registerTemplateJobs(ctx: RendersDeps): void {
  ctx.jobs.register(RENDER_JOB, (payload, context) => runRenderJob(ctx, payload, context), {
    onFailed: (trx, failure) => failRenderOfJob(ctx, trx, failure),
  });
}
