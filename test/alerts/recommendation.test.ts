// Recommendation alerts and auto-stop on the recommendation (always-valid rules only), no_data
// after a day without exposures, and analysis_failed when the analysis job fails for good.
import { expect, it, vi } from 'vitest';
import { enqueueJob } from '../../src/jobs/queue.js';
import { createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { describeEach } from '../support/describe-each.js';
import { ManualClock } from '../support/clock.js';
import type { TestServer } from '../support/server.js';
import { auditOf, waitFor } from '../webhooks/support.js';
import { computeNow, PUBLIC_URL, startedExperiment, useAlertsServer, type Workspace } from './support.js';

// Each test exposes hundreds of units through HTTP and computes several snapshots: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const HOUR = 3600_000;
const clock = new ManualClock();

/** A binary primary metric whose conversion rate per arm is given, on 300 units per arm (min sample 50). */
async function withRates(server: TestServer, ws: Workspace, key: string, rates: { control: number; treatment: number }, extra: Record<string, unknown> = {}) {
  const metric = await createMetric(server, ws.key, { key: `${key}-buy`, event_key: `${key}.buy`, kind: 'binary' });
  const experiment = await startedExperiment(server, ws, key, {
    primary_metric_id: metric,
    decision_rule: { method: 'bayesian.always_valid_evalue', min_sample_per_variant: 50, max_duration_days: 1 },
    ...extra,
  });
  const units = await exposeExactly(server, ws.key, experiment, { control: 300, treatment: 300 }, `${key}-u`);
  const events = (['control', 'treatment'] as const).flatMap((variant) =>
    (units[variant] ?? []).slice(0, Math.round(300 * rates[variant])).map((unit_id) => ({ event_key: `${key}.buy`, unit_id, occurred_at: clock.now() })),
  );
  await sendEvents(server, ws.key, events);
  return experiment;
}

async function experimentOf(server: TestServer, ws: Workspace, id: string) {
  return (await server.request('GET', `/v1/experiments/${id}`, { key: ws.key })).body;
}

describeEach('recommendation alerts and auto-stop', {}, ({ dialect }) => {
  const env = useAlertsServer(dialect, { clock });

  it('sends recommendation_changed once for ship, with the effect, its interval and the reasons', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await withRates(server, ws, 'reco-ship', { control: 0.1, treatment: 0.5 });
    const first = await computeNow(server, ws.key, experiment.id);
    expect(first.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment' });
    await computeNow(server, ws.key, experiment.id);
    const events = await ws.events('experiment.recommendation_changed');
    expect(events).toHaveLength(1);
    const treatment = first.per_variant.find((variant: any) => variant.variant_key === 'treatment');
    expect(events[0].data).toMatchObject({
      experiment: { id: experiment.id, key: 'reco-ship' },
      snapshot_id: first.id,
      recommendation: 'ship',
      variant_key: 'treatment',
      effect: treatment.effect,
      chance_to_beat_control: treatment.effect.chance_to_beat_control,
      reasons: first.decision.recommendation.reasons,
      link: `${PUBLIC_URL}/ui/experiments/${experiment.id}/results`,
    });
    expect((await experimentOf(server, ws, experiment.id)).status).toBe('running');
  });

  it.each([
    ['ship', 'won', { control: 0.1, treatment: 0.5 }],
    ['rollback', 'lost', { control: 0.5, treatment: 0.1 }],
  ] as const)('on_recommendation stops on %s with reason %s, audit-logged with the snapshot', async (action, reason, rates) => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await withRates(server, ws, `auto-${action}`, rates, { auto_stop: { on_recommendation: true } });
    const snapshot = await computeNow(server, ws.key, experiment.id);
    expect(snapshot.decision.recommendation.action).toBe(action);
    expect(await experimentOf(server, ws, experiment.id)).toMatchObject({ status: 'stopped', stop_reason: reason });
    const audit = (await auditOf(server, ws.key, `target_id=${experiment.id}`)).find((entry) => entry.action === 'experiment.stopped');
    expect(audit?.payload).toMatchObject({ stopped_by: 'auto', snapshot_id: snapshot.id, condition: 'recommendation', reason });
    const [stopped] = await ws.events('experiment.stopped');
    expect(stopped.data).toMatchObject({ stopped_by: 'auto', snapshot_id: snapshot.id, reason });
  });

  it('on_recommendation stops on no_difference (planned duration over, no winner) with reason inconclusive', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await withRates(server, ws, 'auto-flat', { control: 0.3, treatment: 0.3 }, { auto_stop: { on_recommendation: true } });
    const early = await computeNow(server, ws.key, experiment.id);
    expect(early.decision.recommendation.action).toBe('keep_running');
    expect((await experimentOf(server, ws, experiment.id)).status).toBe('running');
    clock.advance(25 * HOUR);
    const late = await computeNow(server, ws.key, experiment.id);
    expect(late.decision.recommendation.action).toBe('no_difference');
    expect(await experimentOf(server, ws, experiment.id)).toMatchObject({ status: 'stopped', stop_reason: 'inconclusive' });
  });

  it('sends no_data once when a running experiment has had no exposure for 24 hours', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await startedExperiment(server, ws, 'silent');
    await computeNow(server, ws.key, experiment.id);
    clock.advance(25 * HOUR);
    const late = await computeNow(server, ws.key, experiment.id);
    await computeNow(server, ws.key, experiment.id);
    const events = await ws.events('experiment.no_data');
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ snapshot_id: late.id, reasons: ['no exposures in the first 24 hours of running'] });
  });

  it('sends no_data once for a metric with no events after 24 hours, naming the metric, while units are exposed', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const metric = await createMetric(server, ws.key, { key: 'never-sent', event_key: 'never.sent', kind: 'binary' });
    const experiment = await startedExperiment(server, ws, 'silent-metric', { primary_metric_id: metric });
    await exposeExactly(server, ws.key, experiment, { control: 30, treatment: 30 }, 'silent-metric-u');
    const early = await computeNow(server, ws.key, experiment.id);
    expect(early.traffic.every((variant: any) => variant.exposed_units === 30)).toBe(true);
    clock.advance(25 * HOUR);
    const late = await computeNow(server, ws.key, experiment.id);
    await computeNow(server, ws.key, experiment.id);
    const events = await ws.events('experiment.no_data');
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ experiment: { id: experiment.id }, snapshot_id: late.id, reasons: ['no events for the primary metric never-sent'] });
    expect(events[0].data.traffic.map((variant: any) => variant.exposed_units)).toEqual([30, 30]);
  });

  it('sends analysis_failed once when the analysis job fails for good, and not again until a snapshot succeeds', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const metric = await createMetric(server, ws.key, { key: 'broken', event_key: 'broken', kind: 'count' });
    const experiment = await startedExperiment(server, ws, 'failing', { primary_metric_id: metric });
    // A stored metric definition the analysis cannot read (as a bad manual edit of the database would leave it).
    await server.ctx.db.updateTable('metrics').set({ capping: '{not json' }).where('id', '=', metric).execute();
    const failOnce = async (tag: string) => {
      await enqueueJob(
        server.ctx.db,
        { name: 'analysis.compute', payload: { experiment_id: experiment.id, trigger: 'schedule' }, maxAttempts: 1, jobKey: `t:${tag}` },
        clock.now(),
      );
      server.ctx.onJobEnqueued?.();
      await waitFor(async () => {
        const job = await server.ctx.db.selectFrom('jobs').select('status').where('job_key', '=', `t:${tag}`).executeTakeFirst();
        return job?.status === 'failed';
      }, 'the analysis job to fail');
    };
    await failOnce('a');
    await failOnce('b');
    let events = await ws.events('experiment.analysis_failed');
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ experiment: { id: experiment.id }, reason: expect.stringContaining('JSON') });
    await server.ctx.db.updateTable('metrics').set({ capping: null }).where('id', '=', metric).execute();
    await computeNow(server, ws.key, experiment.id);
    await server.ctx.db.updateTable('metrics').set({ capping: '{not json' }).where('id', '=', metric).execute();
    await failOnce('c');
    events = await ws.events('experiment.analysis_failed');
    expect(events).toHaveLength(2);
  });
});
