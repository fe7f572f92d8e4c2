import { afterAll, beforeAll, expect, it } from 'vitest';
import { RENDER_JOB_MAX_ATTEMPTS } from '../../src/features/renders/job-name.js';
import { markRunning } from '../../src/features/renders/store.js';
import { claimJobs } from '../../src/jobs/queue.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { INVOICE_BODY, INVOICE_DATA, startRenderWorker, waitForRender } from './support.js';

describeEachDialect('render job failures', (server) => {
  let key: string;
  beforeAll(async () => {
    ({ key } = await server().bootstrap('Render failures'));
  });

  let worker: { stop(): Promise<void> } | undefined;
  afterAll(async () => {
    await worker?.stop();
  });

  it('fails a render with the reason when lost workers used up its job’s attempts', async () => {
    const { ctx } = server();
    const template = (await server().request('POST', '/v1/templates', { key, body: { name: 'Invoice', body: INVOICE_BODY } })).body;
    await server().request('POST', `/v1/templates/${template.id}/versions`, { key });
    const submitted = await server().request('POST', '/v1/renders', { key, body: { template_id: template.id, formats: ['pdf'], data: INVOICE_DATA } });
    expect(submitted.status).toBe(202);

    // Each attempt: a worker claims the job, starts the render, and dies (it never renews its lease).
    const start = ctx.clock.now();
    for (let attempt = 1; attempt <= RENDER_JOB_MAX_ATTEMPTS; attempt++) {
      const claimed = await claimJobs(ctx.db, ctx.seam, `lost-worker-${attempt}`, 10, 1, start + attempt * 10);
      expect(claimed.map((job) => [job.name, job.attempts])).toEqual([['templates.render', attempt]]);
      await markRunning(ctx.db, submitted.body.id, start + attempt * 10);
    }
    expect((await server().request('GET', `/v1/renders/${submitted.body.id}`, { key })).body.status).toBe('running');
    while (ctx.clock.now() <= start + RENDER_JOB_MAX_ATTEMPTS * 10 + 1) await new Promise((resolve) => setTimeout(resolve, 10));

    // The next worker finds the lapsed lease with no attempt left: the job and the render fail together.
    worker = startRenderWorker(server());
    const failed = await waitForRender(server(), key, submitted.body.id);
    expect(failed).toMatchObject({
      status: 'failed',
      outputs: [],
      resolved_at: expect.any(String),
      error: `the render job failed: its ${RENDER_JOB_MAX_ATTEMPTS} attempts are used up: the worker running the last one was lost`,
    });
    const job = await ctx.db.selectFrom('jobs').selectAll().where('name', '=', 'templates.render').executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'failed', attempts: RENDER_JOB_MAX_ATTEMPTS + 1, locked_by: null });
    const listed = await server().request('GET', '/v1/renders?status=failed', { key });
    expect(listed.body.data.map((render: { id: string }) => render.id)).toEqual([submitted.body.id]);
  });
});
