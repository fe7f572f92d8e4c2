// Alerts and auto-stop through HTTP: a snapshot that meets a condition sends its event once, and
// again only after the condition cleared; lifecycle moves send experiment.started and .stopped;
// auto-stop stops in the transaction that stores the snapshot, audit-logged with the snapshot.
import { expect, it, vi } from 'vitest';
import { exposeExactly } from '../analysis/support.js';
import { describeEach } from '../support/describe-each.js';
import { auditOf } from '../webhooks/support.js';
import { computeNow, harmfulLoser, harmfulWinner, PUBLIC_URL, startedExperiment, useAlertsServer } from './support.js';

// Each test exposes hundreds of units through HTTP and computes several snapshots: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

describeEach('alerts', {}, ({ dialect }) => {
  const env = useAlertsServer(dialect);

  it('sends experiment.started and experiment.stopped (stopped_by: key) with the experiment and a link', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await startedExperiment(server, ws, 'lifecycle');
    const stopped = await server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: ws.key, body: { reason: 'business' } });
    expect(stopped.status).toBe(200);
    const [started] = await ws.events('experiment.started');
    expect(started).toMatchObject({
      type: 'experiment.started',
      workspace_id: ws.workspaceId,
      data: { experiment: { id: experiment.id, key: 'lifecycle', name: 'Experiment lifecycle' }, link: `${PUBLIC_URL}/ui/experiments/${experiment.id}` },
    });
    const stops = await ws.events('experiment.stopped');
    expect(stops).toHaveLength(1);
    expect(stops[0].data).toMatchObject({ reason: 'business', stopped_by: 'key', snapshot_id: null });
    expect(stops[0]._headers['verdict-event-id']).toBe(stops[0].id);
  });

  it('names who stopped it in experiment.stopped and on the experiment: a key, a person through the admin UI, or auto with the snapshot', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const byKey = await startedExperiment(server, ws, 'stop-by-key');
    const keyStop = await server.request('POST', `/v1/experiments/${byKey.id}/stop`, { key: ws.key, body: { reason: 'business' } });
    expect(keyStop.body).toMatchObject({ stopped_by: 'key', stop_snapshot_id: null });

    const byPerson = await startedExperiment(server, ws, 'stop-by-person');
    const signIn = await server.request('POST', '/ui/session', { body: { key: ws.key } });
    expect(signIn.status, signIn.text).toBe(201);
    const cookie = /verdict_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')?.[0] ?? '';
    const personStop = await server.request('POST', `/v1/experiments/${byPerson.id}/stop`, {
      headers: { cookie, 'x-csrf-token': signIn.body.csrf_token },
      body: { reason: 'lost', outcome_notes: 'hurt signups' },
    });
    expect(personStop.status, personStop.text).toBe(200);
    expect(personStop.body).toMatchObject({ stopped_by: 'person', stop_snapshot_id: null });

    const byAuto = await startedExperiment(server, ws, 'stop-by-auto', { auto_stop: { on_srm: true } });
    await exposeExactly(server, ws.key, byAuto, { control: 200, treatment: 100 }, 'a');
    const snapshot = await computeNow(server, ws.key, byAuto.id);
    const autoRead = await server.request('GET', `/v1/experiments/${byAuto.id}`, { key: ws.key });
    expect(autoRead.body).toMatchObject({ status: 'stopped', stopped_by: 'auto', stop_snapshot_id: snapshot.id });

    const stops = await ws.events('experiment.stopped');
    const byExperiment = Object.fromEntries(stops.map((event) => [event.data.experiment.key, event.data]));
    expect(byExperiment['stop-by-key']).toMatchObject({ stopped_by: 'key', actor_key_id: ws.keyId, snapshot_id: null, reason: 'business' });
    expect(byExperiment['stop-by-person']).toMatchObject({ stopped_by: 'person', actor_key_id: ws.keyId, snapshot_id: null, outcome_notes: 'hurt signups' });
    expect(byExperiment['stop-by-auto']).toMatchObject({ stopped_by: 'auto', actor_key_id: null, snapshot_id: snapshot.id, reason: 'bug' });
    const draft = (await server.request('GET', `/v1/experiments/${(await startedExperiment(server, ws, 'never-stopped')).id}`, { key: ws.key })).body;
    expect(draft).toMatchObject({ status: 'running', stopped_by: null, stop_snapshot_id: null });
  });

  it('holds back effect alerts and the guardrail auto-stop until every variant has min_sample_per_variant units', async () => {
    const { server } = env();
    const ws = await env().workspace();
    // The same data as the guardrail tests (100 units per variant), planned for 500 per variant.
    const { experiment } = await harmfulWinner(server, ws, 'gated', {
      decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 500 },
      auto_stop: { on_guardrail_regression: true },
    });
    const early = await computeNow(server, ws.key, experiment.id);
    // Everything but the sample would alert: a clear winner, a clearly harmed guardrail, a sound split.
    const winner = early.per_variant.find((variant: any) => variant.variant_key === 'treatment');
    const harmed = early.guardrails[0].per_variant.find((variant: any) => variant.variant_key === 'treatment');
    expect(winner.effect.chance_to_beat_control).toBeGreaterThan(0.99);
    expect(harmed.effect.chance_to_beat_control).toBeLessThan(0.01);
    expect(early.srm_warning).toBe(false);
    expect(early.decision.guardrail_regressions).toEqual([]);
    expect(early.decision.recommendation).toMatchObject({ action: 'keep_running', reasons: [{ code: 'below_min_sample' }] });
    await computeNow(server, ws.key, experiment.id);
    expect(await ws.events('experiment.guardrail_regressed')).toEqual([]);
    expect(await ws.events('experiment.recommendation_changed')).toEqual([]);
    expect((await server.request('GET', `/v1/experiments/${experiment.id}`, { key: ws.key })).body.status).toBe('running');

    // Lower the plan to the sample it has: the next snapshot alerts and stops.
    const lowered = await server.request('PATCH', `/v1/experiments/${experiment.id}`, {
      key: ws.key,
      body: { decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 100 } },
    });
    expect(lowered.status, lowered.text).toBe(200);
    const sampled = await computeNow(server, ws.key, experiment.id);
    expect((await ws.events('experiment.guardrail_regressed')).map((event) => event.data.snapshot_id)).toEqual([sampled.id]);
    expect((await ws.events('experiment.recommendation_changed')).map((event) => event.data.recommendation)).toEqual(['rollback']);
    expect((await server.request('GET', `/v1/experiments/${experiment.id}`, { key: ws.key })).body).toMatchObject({ status: 'stopped', stop_reason: 'lost' });
  });

  it('fires srm_detected once across ten snapshots that see it, srm_cleared when it clears, and again when it returns', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await startedExperiment(server, ws, 'srm-once');
    await exposeExactly(server, ws.key, experiment, { control: 200, treatment: 100 }, 'a');
    const snapshots = [];
    for (let i = 0; i < 10; i += 1) snapshots.push(await computeNow(server, ws.key, experiment.id));
    expect(snapshots.every((snapshot) => snapshot.srm_warning)).toBe(true);
    let detected = await ws.events('experiment.srm_detected');
    expect(detected).toHaveLength(1);
    expect(detected[0].data).toMatchObject({ experiment: { id: experiment.id }, snapshot_id: snapshots[0].id, p: snapshots[0].srm_chi_squared_p });
    expect(detected[0].data.worst_slice).toMatchObject({ dimension: 'source', p: expect.any(Number) });
    expect(await ws.events('experiment.srm_cleared')).toHaveLength(0);

    await exposeExactly(server, ws.key, experiment, { control: 0, treatment: 100 }, 'b');
    const cleared = await computeNow(server, ws.key, experiment.id);
    expect(cleared.srm_warning).toBe(false);
    await computeNow(server, ws.key, experiment.id);
    const clearedEvents = await ws.events('experiment.srm_cleared');
    expect(clearedEvents).toHaveLength(1);
    expect(clearedEvents[0].data.snapshot_id).toBe(cleared.id);

    await exposeExactly(server, ws.key, experiment, { control: 250, treatment: 0 }, 'c');
    const back = await computeNow(server, ws.key, experiment.id);
    expect(back.srm_warning).toBe(true);
    await computeNow(server, ws.key, experiment.id);
    detected = await ws.events('experiment.srm_detected');
    expect(detected.map((event) => event.data.snapshot_id)).toEqual([snapshots[0].id, back.id]);
    expect(new Set(detected.map((event) => event.id)).size).toBe(2);
  });

  it('fires guardrail_regressed once per activation, with the effect and its interval', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const { experiment, metrics } = await harmfulWinner(server, ws, 'guard');
    const first = await computeNow(server, ws.key, experiment.id);
    expect(first.decision.guardrail_regressions).toHaveLength(1);
    await computeNow(server, ws.key, experiment.id);
    await computeNow(server, ws.key, experiment.id);
    const events = await ws.events('experiment.guardrail_regressed');
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({
      snapshot_id: first.id,
      metric: { id: metrics.errors, key: 'guard-errors' },
      variant_key: 'treatment',
      chance_to_beat_control: first.decision.guardrail_regressions[0].chance_to_beat_control,
      effect: { relative: { credible_interval_95: [expect.any(Number), expect.any(Number)] } },
    });
    expect(events[0].data.chance_to_beat_control).toBeLessThan(0.05);
  });

  it('catches a guardrail harmed by a variant the decision does not point at: rollback of it, one alert, the auto-stop', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const { experiment, metrics } = await harmfulLoser(server, ws, 'loser', { auto_stop: { on_guardrail_regression: true } });
    const first = await computeNow(server, ws.key, experiment.id);
    expect(first.decision).toMatchObject({ verdict: 'winner', variant_key: 'fast' });
    expect(first.decision.guardrail_regressions).toEqual([expect.objectContaining({ metric_name: 'loser error rate', variant_key: 'harmful' })]);
    expect(first.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'harmful', reasons: [{ code: 'guardrail_regression' }] });
    expect(first.decision.recommendation.reasons[0].message).toMatch(/^harmful makes the guardrail loser error rate worse by \+\d/);

    const [alert, ...more] = await ws.events('experiment.guardrail_regressed');
    expect(more).toEqual([]);
    expect(alert.data).toMatchObject({ snapshot_id: first.id, metric: { id: metrics.errors, name: 'loser error rate' }, variant_key: 'harmful' });
    const read = await server.request('GET', `/v1/experiments/${experiment.id}`, { key: ws.key });
    expect(read.body).toMatchObject({ status: 'stopped', stop_reason: 'lost', stopped_by: 'auto', stop_snapshot_id: first.id });
    expect(read.body.outcome_notes).toBe('Stopped automatically: harmful makes the guardrail loser error rate worse.');
  });

  it('sends guardrail_regressed for a non-winning variant once across snapshots, and not for the variant that harms nothing', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const { experiment } = await harmfulLoser(server, ws, 'loser-once');
    const first = await computeNow(server, ws.key, experiment.id);
    await computeNow(server, ws.key, experiment.id);
    await computeNow(server, ws.key, experiment.id);
    const events = await ws.events('experiment.guardrail_regressed');
    expect(events.map((event) => [event.data.snapshot_id, event.data.variant_key])).toEqual([[first.id, 'harmful']]);
    expect((await server.request('GET', `/v1/experiments/${experiment.id}`, { key: ws.key })).body.status).toBe('running');
  });

  it('stops on SRM when auto_stop.on_srm is set: reason bug, audit names the snapshot, experiment.stopped says auto', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const experiment = await startedExperiment(server, ws, 'auto-srm', { auto_stop: { on_srm: true } });
    expect(experiment.auto_stop).toEqual({ on_recommendation: false, on_guardrail_regression: false, on_srm: true });
    await exposeExactly(server, ws.key, experiment, { control: 200, treatment: 100 }, 'a');
    const snapshot = await computeNow(server, ws.key, experiment.id);
    const read = await server.request('GET', `/v1/experiments/${experiment.id}`, { key: ws.key });
    expect(read.body).toMatchObject({ status: 'stopped', stop_reason: 'bug' });
    // The notes are for people: words and the test's p-value, the snapshot by its id only in stop_snapshot_id and the audit entry.
    expect(read.body.outcome_notes).toMatch(
      /^Stopped automatically: the split does not match the weights \(sample ratio test p [<=] [\d.]+\), so its results cannot be trusted\.$/,
    );
    expect(read.body.stop_snapshot_id).toBe(snapshot.id);
    const audit = (await auditOf(server, ws.key, `target_id=${experiment.id}`)).find((entry) => entry.action === 'experiment.stopped');
    expect(audit).toMatchObject({ actor_id: null, payload: { stopped_by: 'auto', snapshot_id: snapshot.id, reason: 'bug', condition: 'srm' } });
    const [stopped] = await ws.events('experiment.stopped');
    expect(stopped.data).toMatchObject({ reason: 'bug', stopped_by: 'auto', snapshot_id: snapshot.id, experiment: { id: experiment.id } });
  });

  it('stops on a guardrail regression when auto_stop.on_guardrail_regression is set (reason lost); without it, runs on', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const stopping = await harmfulWinner(server, ws, 'auto-guard', { auto_stop: { on_guardrail_regression: true } });
    const snapshot = await computeNow(server, ws.key, stopping.experiment.id);
    const read = await server.request('GET', `/v1/experiments/${stopping.experiment.id}`, { key: ws.key });
    expect(read.body).toMatchObject({ status: 'stopped', stop_reason: 'lost' });
    const audit = (await auditOf(server, ws.key, `target_id=${stopping.experiment.id}`)).find((entry) => entry.action === 'experiment.stopped');
    expect(audit?.payload).toMatchObject({ stopped_by: 'auto', snapshot_id: snapshot.id, condition: 'guardrail_regression' });

    const running = await harmfulWinner(server, ws, 'no-auto-guard');
    await computeNow(server, ws.key, running.experiment.id);
    expect((await server.request('GET', `/v1/experiments/${running.experiment.id}`, { key: ws.key })).body.status).toBe('running');
  });

  it('refuses auto_stop.on_recommendation under bayesian.posterior_threshold with 422 explaining why; accepts it under an always-valid rule', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const refused = await server.request('POST', '/v1/experiments', {
      key: ws.key,
      body: {
        environment_id: ws.environmentId,
        key: 'reco-refused',
        name: 'n',
        hypothesis: 'h',
        unit_type: 'user',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
        auto_stop: { on_recommendation: true },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ pointer: '/auto_stop/on_recommendation', message: expect.stringContaining('5.7-11%') }]);
    expect(refused.body.detail).toMatch(/continuous monitoring/);

    const valid = await startedExperiment(server, ws, 'reco-valid', {
      decision_rule: { method: 'bayesian.always_valid_evalue' },
      auto_stop: { on_recommendation: true },
    });
    expect(valid.auto_stop.on_recommendation).toBe(true);
    const switchRule = await server.request('PATCH', `/v1/experiments/${valid.id}`, {
      key: ws.key,
      body: { decision_rule: { method: 'bayesian.posterior_threshold' } },
    });
    expect(switchRule.status).toBe(422);
    expect(switchRule.body.errors[0].pointer).toBe('/decision_rule/method');
    const after = await server.request('GET', `/v1/experiments/${valid.id}`, { key: ws.key });
    expect(after.body.decision_rule.method).toBe('bayesian.always_valid_evalue');
    const off = await server.request('PATCH', `/v1/experiments/${valid.id}`, { key: ws.key, body: { auto_stop: { on_srm: true } } });
    expect(off.status, off.text).toBe(200);
    expect(off.body.auto_stop).toEqual({ on_recommendation: false, on_guardrail_regression: false, on_srm: true });
  });
});

describeEach('alerts to Slack', {}, ({ dialect }) => {
  const env = useAlertsServer(dialect);

  it('posts a short message: the headline, the effect with its interval, the chance to beat control and the link', async () => {
    const { server } = env();
    const ws = await env().workspace('slack');
    const { experiment } = await harmfulWinner(server, ws, 'slack-guard');
    await computeNow(server, ws.key, experiment.id);
    const [message] = await ws.events('experiment.guardrail_regressed');
    expect(message._headers['verdict-signature']).toBeUndefined();
    expect(message.text).toContain('Experiment slack-guard');
    expect(message.text).toContain(`${PUBLIC_URL}/ui/experiments/${experiment.id}/results`);
    const [headline, numbers, context] = message.blocks;
    expect(headline).toEqual({ type: 'section', text: { type: 'mrkdwn', text: expect.stringContaining('slack-guard-errors') } });
    const fields = numbers.fields.map((field: { text: string }) => field.text);
    expect(fields[0]).toMatch(/^\*Effect of treatment on slack-guard-errors\*\n\+\d+\.\d% \(95% interval \+\d+\.\d% to \+\d+\.\d%\)$/);
    expect(fields[1]).toMatch(/^\*Chance to beat control\*\n\d+\.\d%$/);
    expect(context).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `<${PUBLIC_URL}/ui/experiments/${experiment.id}/results|Open in Verdict>` }],
    });
  });
});
