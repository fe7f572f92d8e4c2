import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { DAY, HOUR, ManualClock, compute, createExperiment, createMetric, exposeExactly, sendEvents, type OutgoingEvent } from './support.js';

/**
 * docs/analysis.md "The recommendation" through HTTP: one small experiment per reason code, each
 * with its own units (so events of one never count in another), read from POST .../compute.
 */
const T0 = Date.UTC(2033, 4, 2, 8);
const clock = new ManualClock(T0);
const UNITS = 40;

interface Plan {
  /** Exposed units per variant (default 40 each); null exposes none. */
  units?: { control: number; treatment: number } | null;
  /** How many of each variant's first units sign up. */
  signups?: { control: number; treatment: number };
  /** Each unit's page load time in ms: the variant's base plus a spread of 0..8 ms. */
  loads?: { control: number; treatment: number };
  rule?: Record<string, unknown>;
  primary?: boolean;
  /** Where the clock stands at the computation (default T0 + 6 h). */
  computeAt?: number;
}

const BASE_RULE = { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 30, minimum_detectable_effect: 0.02 };

describeEachDialect(
  'the recommendation through HTTP',
  (server) => {
    let key: string;
    let environmentId: string;
    let signedUp: string;
    let loadTime: string;

    beforeAll(async () => {
      clock.set(T0);
      ({ key, environmentId } = await server().bootstrap('Recommendation'));
      signedUp = await createMetric(server(), key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary' });
      loadTime = await createMetric(server(), key, {
        key: 'load_ms',
        name: 'Page load time',
        event_key: 'page_load',
        kind: 'duration',
        aggregation: 'mean',
        property_path: 'ms',
        higher_is_better: false,
        unit: 'ms',
      });
    });

    /** Creates, exposes and fills one experiment; returns it with its units per variant. */
    async function setUp(name: string, plan: Plan) {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: name,
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        ...(plan.primary === false ? {} : { primary_metric_id: signedUp }),
        ...(plan.loads ? { guardrail_metric_ids: [loadTime] } : {}),
        decision_rule: { ...BASE_RULE, ...plan.rule },
      });
      const targets = plan.units === null ? null : (plan.units ?? { control: UNITS, treatment: UNITS });
      const units = targets ? await exposeExactly(server(), key, experiment, targets, name) : { control: [], treatment: [] };
      const events: OutgoingEvent[] = [];
      for (const variant of ['control', 'treatment'] as const) {
        (units[variant] ?? []).forEach((unit_id, i) => {
          if (i < (plan.signups?.[variant] ?? 0)) events.push({ event_key: 'signup', unit_id, occurred_at: T0 + HOUR });
          if (plan.loads) events.push({ event_key: 'page_load', unit_id, occurred_at: T0 + HOUR, properties: { ms: plan.loads[variant] + 2 * (i % 5) } });
        });
      }
      clock.set(T0 + 2 * HOUR);
      if (events.length > 0) await sendEvents(server(), key, events);
      clock.set(plan.computeAt ?? T0 + 6 * HOUR);
      return experiment;
    }

    async function recommendationOf(name: string, plan: Plan) {
      const experiment = await setUp(name, plan);
      return (await compute(server(), key, experiment.id)).decision.recommendation;
    }

    const codes = (recommendation: any) => recommendation.reasons.map((reason: any) => reason.code);

    it('ships a clear winner when every check passes, with names beside the keys', async () => {
      const experiment = await setUp('ship', { signups: { control: 6, treatment: 26 }, loads: { control: 100, treatment: 100 } });
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.decision.verdict).toBe('winner');
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment', reasons: [{ code: 'rule_satisfied' }] });
      // The message names the metric as people know it; the key stands in its own field.
      expect(snapshot.decision.recommendation.reasons[0].message).toMatch(/on Sign-ups by \+\d/);
      expect(snapshot.decision.recommendation.reasons[0].message).not.toMatch(/signed_up|bayesian\.|min_sample/);
      expect(snapshot.primary_metric).toMatchObject({ key: 'signed_up', name: 'Sign-ups', unit: null });
      expect(snapshot.guardrails[0]).toMatchObject({ metric_key: 'load_ms', metric_name: 'Page load time', unit: 'ms' });
    });

    it('rolls back a winner that is slower on a lower-is-better guardrail', async () => {
      const experiment = await setUp('slower', { signups: { control: 6, treatment: 26 }, loads: { control: 100, treatment: 130 } });
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.decision).toMatchObject({
        verdict: 'winner',
        variant_key: 'treatment',
        guardrail_regressions: [{ metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'treatment' }],
      });
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'treatment', reasons: [{ code: 'guardrail_regression' }] });
      expect(snapshot.decision.recommendation.reasons[0].message).toContain('makes the guardrail Page load time worse');
      expect(snapshot.decision.recommendation.reasons[0].message).not.toContain('load_ms');
    });

    it('rolls back a variant that is not winning but is slower on a guardrail, whatever the primary metric says', async () => {
      const experiment = await setUp('slower-not-winning', { signups: { control: 16, treatment: 16 }, loads: { control: 100, treatment: 130 } });
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.decision).toMatchObject({
        verdict: 'keep_running',
        variant_key: null,
        guardrail_regressions: [{ metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'treatment' }],
      });
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'treatment' });
      expect(codes(snapshot.decision.recommendation)).toEqual(['guardrail_regression']);
      expect(snapshot.decision.recommendation.reasons[0].message).toMatch(/^treatment makes the guardrail Page load time worse by \+\d+\.\d% \(95% interval/);
    });

    it('counts no guardrail regression before every variant reached the planned sample', async () => {
      const experiment = await setUp('slower-early', {
        signups: { control: 16, treatment: 16 },
        loads: { control: 100, treatment: 130 },
        rule: { min_sample_per_variant: 41 },
      });
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.guardrails[0].per_variant[1].effect.chance_to_beat_control).toBeLessThan(0.05);
      expect(snapshot.decision.guardrail_regressions).toEqual([]);
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'keep_running', reasons: [{ code: 'below_min_sample' }] });
    });

    it('rolls back when the control wins', async () => {
      const recommendation = await recommendationOf('control-won', { signups: { control: 26, treatment: 6 } });
      expect(recommendation).toMatchObject({ action: 'rollback', variant_key: 'control' });
      expect(codes(recommendation)).toEqual(['control_won']);
    });

    it('investigates a broken split even with a confident winner', async () => {
      const experiment = await setUp('broken-split', { units: { control: 70, treatment: 25 }, signups: { control: 8, treatment: 20 } });
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.srm_warning).toBe(true);
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'investigate', variant_key: null });
      expect(codes(snapshot.decision.recommendation)).toEqual(['srm']);
    });

    it('investigates an experiment nobody was exposed to', async () => {
      const recommendation = await recommendationOf('unexposed', { units: null });
      expect(recommendation).toMatchObject({ action: 'investigate', reasons: [{ code: 'no_exposures' }] });
    });

    it('investigates a metric that counted no event', async () => {
      const recommendation = await recommendationOf('silent', { signups: { control: 0, treatment: 0 } });
      expect(recommendation).toMatchObject({ action: 'investigate', reasons: [{ code: 'no_metric_events' }] });
      expect(recommendation.reasons[0].message).toContain('counted in Sign-ups among');
    });

    it('investigates an experiment without a primary metric', async () => {
      const recommendation = await recommendationOf('no-primary', { primary: false });
      expect(codes(recommendation)).toEqual(['no_primary_metric']);
    });

    it('keeps running below min_sample_per_variant', async () => {
      const recommendation = await recommendationOf('short', { signups: { control: 6, treatment: 26 }, rule: { min_sample_per_variant: 100 } });
      expect(recommendation).toMatchObject({ action: 'keep_running', variant_key: null, reasons: [{ code: 'below_min_sample' }] });
      expect(recommendation.reasons[0].message).toContain('The plan asks for at least 100 units per variant; control (40), treatment (40) have fewer.');
    });

    it('keeps running while the rule is not satisfied', async () => {
      const recommendation = await recommendationOf('undecided', { signups: { control: 20, treatment: 22 } });
      expect(recommendation).toMatchObject({ action: 'keep_running', reasons: [{ code: 'rule_not_satisfied' }] });
    });

    it('reports no difference when the rule rules out the minimum detectable effect', async () => {
      const recommendation = await recommendationOf('alike', { signups: { control: 20, treatment: 20 }, rule: { minimum_detectable_effect: 2 } });
      expect(recommendation).toMatchObject({ action: 'no_difference', reasons: [{ code: 'no_difference' }] });
    });

    it('reads the end of max_duration_days without a winner as no difference', async () => {
      const recommendation = await recommendationOf('over', {
        signups: { control: 20, treatment: 21 },
        rule: { max_duration_days: 1 },
        computeAt: T0 + 2 * DAY,
      });
      expect(recommendation).toMatchObject({ action: 'no_difference', reasons: [{ code: 'max_duration_reached' }] });
    });

    it('never tells a stopped experiment to stop', async () => {
      const experiment = await setUp('stopped', { signups: { control: 6, treatment: 26 } });
      const stopped = await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'won' } });
      expect(stopped.status, stopped.text).toBe(200);
      const recommendation = (await compute(server(), key, experiment.id)).decision.recommendation;
      expect(recommendation.action).toBe('ship');
      expect(recommendation.reasons[0].message).not.toMatch(/stop the experiment/i);
    });

    it('gives a snapshot stored before recommendations and names the same recommendation when read', async () => {
      const experiment = await setUp('legacy', { signups: { control: 6, treatment: 26 }, loads: { control: 100, treatment: 130 } });
      const fresh = await compute(server(), key, experiment.id);
      const stored = await server().ctx.db.selectFrom('analysis_snapshots').select('document').where('id', '=', fresh.id).executeTakeFirstOrThrow();
      const legacy = JSON.parse(stored.document);
      delete legacy.decision.recommendation;
      delete legacy.primary_metric.name;
      for (const guardrail of legacy.guardrails) delete guardrail.metric_name;
      for (const regression of legacy.decision.guardrail_regressions) delete regression.metric_name;
      for (const guardrail of legacy.guardrails) delete guardrail.unit;
      await sql`UPDATE analysis_snapshots SET document = ${JSON.stringify(legacy)} WHERE id = ${fresh.id}`.execute(server().ctx.db);
      const read = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key });
      expect(read.status).toBe(200);
      expect(fresh.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'treatment', reasons: [{ code: 'guardrail_regression' }] });
      // The same recommendation, derived from the stored fields; without stored names it names the key.
      expect(read.body.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'treatment', reasons: [{ code: 'guardrail_regression' }] });
      expect(read.body.decision.recommendation.reasons[0].message).toContain('guardrail load_ms');
      expect(read.body.primary_metric.name).toBe('signed_up');
      expect(read.body.guardrails[0]).toMatchObject({ metric_name: 'load_ms', unit: null });
    });

    it('answers a compact history with fields=summary: the recommendation and the primary effect per variant, a small fraction of the bytes', async () => {
      const experiment = await setUp('summary', { signups: { control: 6, treatment: 26 }, loads: { control: 100, treatment: 101 } });
      for (const hours of [6, 7, 8]) {
        clock.set(T0 + hours * HOUR);
        await compute(server(), key, experiment.id);
      }
      const path = `/v1/experiments/${experiment.id}/results/history`;
      const full = await server().request('GET', path, { key });
      const summary = await server().request('GET', `${path}?fields=summary`, { key });
      expect(summary.status).toBe(200);
      expect(summary.headers.get('content-type')).toContain('application/json');
      expect(summary.body.snapshots).toHaveLength(3);
      summary.body.snapshots.forEach((item: any, index: number) => {
        const whole = full.body.snapshots[index];
        expect(item).toEqual({
          id: whole.id,
          computed_at: whole.computed_at,
          trigger: 'api',
          primary_metric_id: whole.primary_metric.id,
          verdict: whole.decision.verdict,
          srm_warning: whole.srm_warning,
          recommendation: whole.decision.recommendation,
          per_variant: whole.per_variant.map((variant: any) => ({
            variant_key: variant.variant_key,
            is_control: variant.is_control,
            sample_size: variant.sample_size,
            relative: variant.effect && { mean: variant.effect.relative.mean, credible_interval_95: variant.effect.relative.credible_interval_95 },
            chance_to_beat_control: variant.effect?.chance_to_beat_control ?? null,
          })),
        });
      });
      expect(summary.body.snapshots[0].per_variant[1].relative.mean).toBeGreaterThan(1);
      // Even this small experiment's snapshot (one guardrail, the source breakdown) is several times
      // the summary; a real one with dimensions is about 20 kB, the summary stays under 1 kB.
      expect(summary.text.length / full.text.length).toBeLessThan(0.25);
      expect(summary.text.length / 3).toBeLessThan(1200);
      const paged = await server().request('GET', `${path}?fields=summary&limit=2`, { key });
      expect(paged.body.snapshots.map((item: any) => item.id)).toEqual(full.body.snapshots.slice(0, 2).map((item: any) => item.id));
      expect((await server().request('GET', `${path}?fields=everything`, { key })).status).toBe(400);
    });

    it('says how a draft gets results instead of offering a compute that answers 409', async () => {
      const draft = await createExperiment(
        server(),
        key,
        {
          environment_id: environmentId,
          key: 'draft',
          variants: [
            { key: 'control', weight: 50 },
            { key: 'treatment', weight: 50 },
          ],
        },
        false,
      );
      const results = await server().request('GET', `/v1/experiments/${draft.id}/results`, { key });
      expect(results.status).toBe(404);
      expect(results.body.detail).toContain(`POST /v1/experiments/${draft.id}/start`);
      expect(results.body.detail).not.toMatch(/computes one now/);
      expect((await server().request('POST', `/v1/experiments/${draft.id}/results/compute`, { key })).status).toBe(409);
    });
  },
  { clock },
);
