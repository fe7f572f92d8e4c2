import { beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startEventDrainer } from '../../src/features/events/background.js';
import { startTestWorker } from '../support/jobs.js';
import { createExperiment, exposeExactly } from '../analysis/support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { scrape, type Exposition } from '../support/prometheus.js';

const MINUTE = 60_000;

async function eventually(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const requests = (exposition: Exposition, method: string, route: string, status: number) =>
  exposition.count('verdict_http_requests_total', { method, route, status_code: String(status) });

describeEachDialect(
  'GET /metrics',
  (server) => {
    let key: string;
    let environmentId: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap());
    });

    it('answers without a key, in the Prometheus text format, with the process figures', async () => {
      const response = await fetch(`${server().url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const exposition = await scrape(server().url);
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_p99_seconds',
      ]) {
        expect(exposition.names, name).toContain(name);
      }
    });

    it('counts requests and their latency per route pattern and status, never per raw URL', async () => {
      // One scrape of this test's own before `before`, so two precede `after` whatever ran earlier.
      expect((await fetch(`${server().url}/metrics`)).status).toBe(200);
      const before = await scrape(server().url);
      for (let i = 0; i < 3; i++) expect((await server().request('GET', '/v1/workspaces/current', { key })).status).toBe(200);
      expect((await server().request('GET', '/v1/experiments/01JZZZZZZZZZZZZZZZZZZZZZZZ', { key })).status).toBe(404);
      expect((await server().request('GET', '/v1/experiments/01JYYYYYYYYYYYYYYYYYYYYYYY', { key })).status).toBe(404);
      expect((await server().request('GET', '/v1/workspaces/current')).status).toBe(401);
      expect((await server().request('GET', '/no/such/path/a1')).status).toBe(404);
      expect((await server().request('GET', '/no/such/path/b2')).status).toBe(404);
      const after = await scrape(server().url);

      expect(requests(after, 'GET', '/v1/workspaces/current', 200) - requests(before, 'GET', '/v1/workspaces/current', 200)).toBe(3);
      expect(requests(after, 'GET', '/v1/workspaces/current', 401) - requests(before, 'GET', '/v1/workspaces/current', 401)).toBe(1);
      expect(requests(after, 'GET', '/v1/experiments/:id', 404) - requests(before, 'GET', '/v1/experiments/:id', 404)).toBe(2);
      expect(requests(after, 'GET', 'unmatched', 404) - requests(before, 'GET', 'unmatched', 404)).toBe(2);
      expect(after.text).not.toContain('01JZZZZZZZZZZZZZZZZZZZZZZZ');
      expect(after.text).not.toContain('/no/such/path');

      const labels = { method: 'GET', route: '/v1/workspaces/current', status_code: '200' };
      const histogramCount = after.count('verdict_http_request_duration_seconds_count', labels);
      expect(histogramCount).toBe(requests(after, 'GET', '/v1/workspaces/current', 200));
      expect(after.count('verdict_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(histogramCount);
      expect(after.count('verdict_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
      // The scrape itself is a request like any other.
      expect(requests(after, 'GET', '/metrics', 200)).toBeGreaterThanOrEqual(2);
    });

    it('counts buffered events, shows them pending until the drainer stores them, then counts them drained', async () => {
      const before = await scrape(server().url);
      expect(before.get('verdict_buffer_max_pending_events')).toBe(100_000);
      const events = Array.from({ length: 5 }, (_, i) => ({ event_key: 'purchase', unit_id: `buyer-${i}`, client_event_id: `metrics-${i}` }));
      expect((await server().request('POST', '/v1/events/batch', { key, body: { events } })).status).toBe(202);
      // A replay is acknowledged but not buffered again.
      expect((await server().request('POST', '/v1/events', { key, body: events[0] })).status).toBe(202);
      const buffered = await scrape(server().url);
      expect(buffered.count('verdict_events_buffered_total') - before.count('verdict_events_buffered_total')).toBe(5);
      expect(buffered.get('verdict_buffer_pending_events')).toBe(5);

      const drainer = startEventDrainer(server().ctx);
      try {
        await eventually(async () => (await scrape(server().url)).get('verdict_buffer_pending_events') === 0);
      } finally {
        await drainer.stop();
      }
      const drained = await scrape(server().url);
      expect(drained.count('verdict_events_drained_total') - before.count('verdict_events_drained_total')).toBe(5);
      expect(drained.get('verdict_metrics_source_up', { source: 'buffer' })).toBe(1);
    });

    it('shows the job queue per lane: due jobs, the age of the oldest, and jobs that failed for good', async () => {
      const { ctx } = server();
      const general = { lane: 'general' };
      const outbound = { lane: 'outbound' };
      const before = await scrape(server().url);
      for (const lane of [general, outbound]) {
        expect(before.get('verdict_job_queue_depth', lane)).toBe(0);
        expect(before.get('verdict_job_oldest_due_age_seconds', lane)).toBe(0);
      }
      // No worker runs in the test server, so jobs wait; this one has been due for ten minutes.
      const now = ctx.clock.now();
      await ctx.enqueue(ctx.db, { name: 'metrics.unknown_job', runAt: now - 10 * MINUTE, maxAttempts: 1 });
      await ctx.enqueue(ctx.db, { name: 'metrics.unknown_job', runAt: now - MINUTE, maxAttempts: 1 });
      await ctx.enqueue(ctx.db, { name: 'metrics.unknown_job', runAt: now + 60 * MINUTE, maxAttempts: 1 });
      const workspaceId = (await ctx.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow()).id;
      await ctx.enqueue(ctx.db, { name: 'metrics.unknown_delivery', lane: 'outbound', workspaceId, runAt: now - 2 * MINUTE, maxAttempts: 1 });
      const waiting = await scrape(server().url);
      expect(waiting.get('verdict_job_queue_depth', general)).toBe(2);
      expect(waiting.get('verdict_job_oldest_due_age_seconds', general)).toBeGreaterThanOrEqual(600);
      expect(waiting.get('verdict_job_oldest_due_age_seconds', general)).toBeLessThan(660);
      expect(waiting.get('verdict_job_queue_depth', outbound)).toBe(1);
      expect(waiting.get('verdict_job_oldest_due_age_seconds', outbound)).toBeGreaterThanOrEqual(120);
      expect(waiting.get('verdict_job_oldest_due_age_seconds', outbound)).toBeLessThan(180);
      expect(waiting.get('verdict_metrics_source_up', { source: 'database' })).toBe(1);

      // A worker that has no handler for them fails the due jobs of both lanes for good.
      const worker = startTestWorker(server(), { concurrency: 4 });
      try {
        await eventually(async () => {
          const scraped = await scrape(server().url);
          return scraped.get('verdict_jobs_failed', general) === 2 && scraped.get('verdict_jobs_failed', outbound) === 1;
        });
      } finally {
        await worker.stop();
      }
      const after = await scrape(server().url);
      for (const lane of [general, outbound]) {
        expect(after.get('verdict_job_queue_depth', lane)).toBe(0);
        expect(after.get('verdict_job_oldest_due_age_seconds', lane)).toBe(0);
      }
    });

    it('counts snapshots and their duration, running experiments with an SRM warning, and cache hits', async () => {
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'metrics-srm',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      });
      // 90 against 30 on a 50/50 split: far beyond chance (SRM p < 0.001).
      const units = await exposeExactly(server(), key, experiment, { a: 90, b: 30 }, 'srm');
      const before = await scrape(server().url);
      expect(before.get('verdict_experiments_running')).toBe(1);
      expect(before.get('verdict_experiments_srm_warning')).toBe(0);

      const computed = await server().request('POST', `/v1/experiments/${experiment.id}/results/compute`, { key });
      expect(computed.status).toBe(201);
      expect(computed.body.srm_warning).toBe(true);
      // A returning unit is answered from the sticky cache.
      const again = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'metrics-srm', unit_id: units.a?.[0] } });
      expect(again.status).toBe(200);

      const after = await scrape(server().url);
      expect(after.count('verdict_analysis_snapshots_total', { trigger: 'api' }) - before.count('verdict_analysis_snapshots_total', { trigger: 'api' })).toBe(
        1,
      );
      expect(after.count('verdict_analysis_snapshot_duration_seconds_count', { trigger: 'api' })).toBe(1);
      expect(after.count('verdict_analysis_snapshot_duration_seconds_sum', { trigger: 'api' })).toBeGreaterThan(0);
      expect(after.get('verdict_experiments_srm_warning')).toBe(1);
      const cache = (name: string, result: string, exposition = after) => exposition.count('verdict_cache_requests_total', { cache: name, result });
      expect(cache('sticky_assignments', 'hit') - cache('sticky_assignments', 'hit', before)).toBe(1);
      expect(cache('experiment_definitions', 'hit') - cache('experiment_definitions', 'hit', before)).toBeGreaterThanOrEqual(1);
      expect(cache('api_keys', 'hit')).toBeGreaterThan(cache('api_keys', 'miss'));

      // Stopped, it is no longer a running experiment to warn about.
      expect((await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'business' } })).status).toBe(200);
      const stopped = await scrape(server().url);
      expect(stopped.get('verdict_experiments_running')).toBe(0);
      expect(stopped.get('verdict_experiments_srm_warning')).toBe(0);
    });
  },
  // Definitions cached for longer than the default 5 s: the hit counted above comes after a compute,
  // which took over 5 s on a loaded CI machine, and the definition had expired by then.
  { config: { assignmentCacheTtlMs: 10 * MINUTE } },
);

describeEachDialect(
  'GET /metrics with VERDICT_METRICS=0',
  (server) => {
    it('is not served: a 404 problem, and requests are not measured', async () => {
      const response = await server().request('GET', '/metrics');
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 404, title: 'Not Found' });
      await expect(server().ctx.metrics.registry.getSingleMetric('verdict_http_requests_total')?.get()).resolves.toMatchObject({ values: [] });
    });
  },
  { config: { metrics: loadConfig({ VERDICT_METRICS: '0' }).metrics } },
);
