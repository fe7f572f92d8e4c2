import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import { compute, createExperiment, createMetric, sendEvents, type OutgoingEvent } from '../analysis/support.js';
import type { Bootstrap, TestServer } from '../support/server.js';

// The data a growth PM looks at in issue #33, made small: one running experiment with three
// variants whose split is broken in one country and whose best variant makes pages load slower
// (a lower-is-better guardrail), one stopped experiment with a clean winner, and one draft.

export interface DecisionFixture {
  broken: { id: string; key: string };
  stopped: { id: string; key: string };
  draft: { id: string; key: string };
  metrics: { signup: string; loadTime: string; revenue: string };
}

const THREE = [
  { key: 'control', weight: 34, is_control: true },
  { key: 'guided', weight: 33 },
  { key: 'compact', weight: 33 },
];

const TWO = [
  { key: 'control', weight: 50, is_control: true },
  { key: 'treatment', weight: 50 },
];

/** A deterministic spread in [0, 1) per unit, so the data is the same on every run. */
function spread(n: number): number {
  return ((n * 7919) % 1000) / 1000;
}

/** Assigns `count` units in rounds; `logged(n, variant)` decides whether the exposure is logged. */
async function assignUnits(
  server: TestServer,
  key: string,
  experimentKey: string,
  variants: typeof THREE,
  count: number,
  context: (n: number) => Record<string, unknown>,
  logged: (n: number, variant: string) => boolean,
): Promise<{ unit_id: string; variant: string; n: number }[]> {
  const units = Array.from({ length: count }, (_, n) => ({ unit_id: `${experimentKey}-${n}`, n, variant: '' }));
  for (const unit of units) unit.variant = chooseVariant(experimentKey, unit.unit_id, variants).key;
  for (let start = 0; start < units.length; start += 100) {
    const round = units.slice(start, start + 100);
    const answers = await Promise.all(
      round.map((unit) =>
        server.request('POST', '/v1/assign', {
          key,
          body: { experiment_key: experimentKey, unit_id: unit.unit_id, context: context(unit.n), log_exposure: logged(unit.n, unit.variant) },
        }),
      ),
    );
    for (const answer of answers) if (answer.status !== 200) throw new Error(`assign: ${answer.status} ${answer.text}`);
  }
  return units.filter((unit) => logged(unit.n, unit.variant));
}

/** Per variant: chance of a signup, and the mean page load in ms. */
const BEHAVIOUR: Record<string, { signup: number; loadMs: number }> = {
  control: { signup: 0.12, loadMs: 1000 },
  guided: { signup: 0.22, loadMs: 1250 },
  compact: { signup: 0.13, loadMs: 980 },
  treatment: { signup: 0.24, loadMs: 1000 },
};

function eventsOf(units: { unit_id: string; variant: string; n: number }[]): OutgoingEvent[] {
  const now = Date.now();
  return units.flatMap(({ unit_id, variant, n }) => {
    const behaviour = BEHAVIOUR[variant] ?? { signup: 0.1, loadMs: 1000 };
    const u = spread(n);
    const events: OutgoingEvent[] = [{ event_key: 'page.load', unit_id, occurred_at: now, properties: { ms: Math.round(behaviour.loadMs * (0.8 + 0.4 * u)) } }];
    // A backfill: some units' page loads from ten days before their exposure arrive late and count in no metric.
    if (n % 50 === 0) events.push({ event_key: 'page.load', unit_id, occurred_at: now - 10 * 86_400_000, properties: { ms: 900 } });
    if (u < behaviour.signup) {
      events.push({ event_key: 'signup', unit_id, occurred_at: now });
      events.push({ event_key: 'purchase', unit_id, occurred_at: now, properties: { amount: 20 + Math.round(40 * u) } });
    }
    return events;
  });
}

export async function makeDecisionFixture(server: TestServer, boot: Bootstrap): Promise<DecisionFixture> {
  const key = boot.key;
  const metrics = {
    signup: await createMetric(server, key, { key: 'signup.conversion', name: 'Signup conversion', event_key: 'signup', kind: 'binary' }),
    loadTime: await createMetric(server, key, {
      key: 'page.load_ms',
      name: 'Page load time',
      event_key: 'page.load',
      kind: 'duration',
      aggregation: 'mean',
      property_path: 'ms',
      unit: 'ms',
      higher_is_better: false,
    }),
    revenue: await createMetric(server, key, {
      key: 'revenue.per_user',
      name: 'Revenue per user',
      event_key: 'purchase',
      kind: 'revenue',
      aggregation: 'sum',
      property_path: 'amount',
      unit: 'USD',
    }),
  };
  const rule = { posterior_threshold: 0.95, min_sample_per_variant: 100, max_duration_days: 28 };

  const broken = await createExperiment(server, key, {
    environment_id: boot.environmentId,
    key: 'guided-onboarding',
    name: 'Guided onboarding',
    variants: THREE,
    primary_metric_id: metrics.signup,
    guardrail_metric_ids: [metrics.loadTime, metrics.revenue],
    dimensions: ['country'],
    decision_rule: rule,
  });
  const countries = ['us', 'de', 'br'];
  // Brazil's treatment exposures are lost: only one in five is logged.
  const brokenUnits = await assignUnits(
    server,
    key,
    'guided-onboarding',
    THREE,
    900,
    (n) => ({ country: countries[n % 3] }),
    (n, variant) => n % 3 !== 2 || variant === 'control' || n % 5 === 0,
  );
  await sendEvents(server, key, eventsOf(brokenUnits));
  await compute(server, key, broken.id);
  await compute(server, key, broken.id);

  const stopped = await createExperiment(server, key, {
    environment_id: boot.environmentId,
    key: 'short-signup-form',
    name: 'Short signup form',
    variants: TWO,
    primary_metric_id: metrics.signup,
    guardrail_metric_ids: [metrics.loadTime],
    decision_rule: rule,
  });
  const stoppedUnits = await assignUnits(
    server,
    key,
    'short-signup-form',
    TWO,
    400,
    () => ({}),
    () => true,
  );
  await sendEvents(server, key, eventsOf(stoppedUnits));
  await compute(server, key, stopped.id);
  const stop = await server.request('POST', `/v1/experiments/${stopped.id}/stop`, { key, body: { reason: 'won' } });
  if (stop.status !== 200) throw new Error(`stop: ${stop.status} ${stop.text}`);

  const draft = await createExperiment(
    server,
    key,
    { environment_id: boot.environmentId, key: 'pricing-page', name: 'Pricing page', variants: TWO, primary_metric_id: metrics.revenue },
    false,
  );
  return {
    broken: { id: broken.id, key: broken.key },
    stopped: { id: stopped.id, key: stopped.key },
    draft: { id: draft.id, key: draft.key },
    metrics,
  };
}
