import { beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../support/each-dialect.js';
import { random } from './incremental-support.js';
import { DAY, HOUR, MINUTE, ManualClock, assignUnits, compute, createExperiment, createMetric, sendEvents, type OutgoingEvent } from './support.js';

/**
 * docs/metrics.md "Funnel metrics" and "Retention metrics" through HTTP, in both computation
 * modes: on seeded random exposures and events (some before the exposure, some after the window,
 * steps out of order, conditions of every JSON type), every count of the snapshot equals a
 * direct computation of the definitions here: a unit reaches step k when some events of steps
 * 1..k, each after the one before (the first at or after the exposure), all fall before
 * exposed_at + window (found by trying every ordered choice, not the stores' earliest-event
 * chain); a retention unit is eligible once exposed_at + to has passed, and converts with an
 * event in [exposed_at + from, exposed_at + to).
 */
const T0 = Date.UTC(2034, 3, 2, 9);
const clock = new ManualClock(T0);

type Value = string | number | boolean;
interface Where {
  property_path: string;
  op: 'eq' | 'neq' | 'gte' | 'lt';
  value: Value;
}
interface Step {
  event_key: string;
  where?: Where;
}
const FUNNEL_STEPS: Step[] = [
  { event_key: 'view' },
  { event_key: 'cart', where: { property_path: 'plan.tier', op: 'eq', value: 'pro' } },
  { event_key: 'cart', where: { property_path: 'plan.tier', op: 'neq', value: 'pro' } },
  { event_key: 'buy', where: { property_path: 'amount', op: 'gte', value: 20 } },
];
const FUNNEL_WINDOW = 2 * DAY;
const FLAG_STEPS: Step[] = [
  { event_key: 'view', where: { property_path: 'flag', op: 'eq', value: true } },
  { event_key: 'buy', where: { property_path: 'amount', op: 'lt', value: 25 } },
];
const RETENTION = { any: { from: 2 * DAY, to: 5 * DAY }, view: { from: 0, to: DAY + 12 * HOUR } };
const BATCHES = 4;
const UNITS_PER_BATCH = 30;

interface Unit {
  id: string;
  variant: string;
  exposedAt: number;
  events: Array<{ key: string; at: number; properties: Record<string, unknown> }>;
}

function valueAt(properties: Record<string, unknown>, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), properties);
}

function meets(where: Where | undefined, properties: Record<string, unknown>): boolean {
  if (!where) return true;
  const value = valueAt(properties, where.property_path);
  const equal = typeof value === typeof where.value && value === where.value;
  if (where.op === 'eq') return equal;
  if (where.op === 'neq') return !equal;
  if (typeof value !== 'number') return false;
  return where.op === 'gte' ? value >= (where.value as number) : value < (where.value as number);
}

/** Whether some ordered choice of events completes the first `k` steps within the window. */
function reaches(unit: Unit, steps: readonly Step[], k: number, window: number): boolean {
  const end = unit.exposedAt + window;
  const go = (index: number, previous: number): boolean =>
    index === k ||
    unit.events.some((event) => {
      const step = steps[index] as Step;
      const ordered = index === 0 ? event.at >= unit.exposedAt : event.at > previous;
      return event.key === step.event_key && meets(step.where, event.properties) && ordered && event.at < end && go(index + 1, event.at);
    });
  return go(0, unit.exposedAt);
}

function retained(unit: Unit, window: { from: number; to: number }, key: string | null): boolean {
  return unit.events.some((event) => (key === null || event.key === key) && event.at >= unit.exposedAt + window.from && event.at < unit.exposedAt + window.to);
}

function propertiesFor(rand: () => number, key: string): Record<string, unknown> {
  const tiers: Value[] = ['pro', 'pro', 'free', 'free', 1, true];
  if (key === 'cart') return rand() < 0.1 ? {} : { plan: { tier: tiers[Math.floor(rand() * tiers.length)] } };
  if (key === 'buy') return { amount: rand() < 0.1 ? '30' : Math.floor(rand() * 50) };
  if (key === 'view') return { flag: rand() < 0.5 ? true : rand() < 0.5 ? 'true' : false };
  return {};
}

/** Six to seventeen events per unit from six hours before its exposure to three days after it, and a few to five days after it, never past `now`. */
function eventsFor(rand: () => number, units: Unit[], now: number): OutgoingEvent[] {
  const keys = ['view', 'cart', 'cart', 'buy', 'ping'];
  const events: OutgoingEvent[] = [];
  for (const unit of units) {
    const count = 6 + Math.floor(rand() * 12);
    for (let i = 0; i < count; i += 1) {
      const key = keys[Math.floor(rand() * keys.length)] as string;
      const span = rand() < 0.8 ? 3 * DAY : 5 * DAY;
      const at = Math.min(now - MINUTE, unit.exposedAt - 6 * HOUR + Math.floor(rand() * span));
      const properties = propertiesFor(rand, key);
      unit.events.push({ key, at, properties });
      events.push({ event_key: key, unit_id: unit.id, occurred_at: at, properties });
    }
  }
  return events;
}

describeEachStore(
  'funnel and retention metrics through HTTP',
  (server) => {
    let key: string;
    let experiment: any;
    const units: Unit[] = [];
    let now = 0;

    beforeAll(async () => {
      clock.set(T0);
      const boot = await server().bootstrap('Funnels');
      key = boot.key;
      const funnel = await createMetric(server(), key, { key: 'checkout', kind: 'funnel', steps: FUNNEL_STEPS, window: 'P2D' });
      const flagged = await createMetric(server(), key, { key: 'flagged', kind: 'funnel', steps: FLAG_STEPS, window: 'P1D' });
      const anyEvent = await createMetric(server(), key, { key: 'back', kind: 'retention', retention: { from: 'P2D', to: 'P5D' } });
      const viewed = await createMetric(server(), key, { key: 'viewed', kind: 'retention', event_key: 'view', retention: { from: 'PT0S', to: 'P1DT12H' } });
      experiment = await createExperiment(server(), key, {
        environment_id: boot.environmentId,
        key: 'funnels',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: funnel,
        guardrail_metric_ids: [anyEvent],
        secondary_metric_ids: [viewed, flagged],
        variance_reduction: { method: 'cuped', lookback_days: 7 },
      });
      const rand = random(5813);
      for (let batch = 0; batch < BATCHES; batch += 1) {
        clock.set(T0 + batch * 2 * DAY);
        const ids = Array.from({ length: UNITS_PER_BATCH }, (_, i) => `u-${batch}-${i}`);
        const variants = await assignUnits(server(), key, experiment.key, ids);
        ids.forEach((id, i) => units.push({ id, variant: variants[i] as string, exposedAt: clock.now(), events: [] }));
      }
      now = T0 + 8 * DAY;
      clock.set(now);
      await sendEvents(server(), key, eventsFor(rand, units, now));
    });

    const byVariant = (perVariant: any[], variant: string) => perVariant.find((entry) => entry.variant_key === variant);
    const inVariant = (variant: string) => units.filter((unit) => unit.variant === variant);

    function expectFunnel(perVariant: any[], steps: readonly Step[], window: number): number[] {
      const reached: number[] = [];
      for (const variant of ['control', 'treatment']) {
        const members = inVariant(variant);
        const entry = byVariant(perVariant, variant);
        const counts = steps.map((_, index) => members.filter((unit) => reaches(unit, steps, index + 1, window)).length);
        expect(entry.sample_size, `${variant} units`).toBe(members.length);
        expect(entry.conversions, `${variant} conversions`).toBe(counts.at(-1));
        expect(
          entry.steps.map((step: any) => step.conversions),
          `${variant} steps`,
        ).toEqual(counts);
        entry.steps.forEach((step: any, index: number) => {
          const before = index === 0 ? members.length : (counts[index - 1] as number);
          expect(step.event_key).toBe(steps[index]?.event_key);
          expect(step.rate).toBeCloseTo((counts[index] as number) / members.length, 12);
          expect(step.step_rate).toBe(before > 0 ? (counts[index] as number) / before : null);
          const [low, high] = step.rate_interval_95;
          expect(0 <= low && low < high && high <= 1, `${variant} step ${index} interval`).toBe(true);
          if (step.rate > 0 && step.rate < 1) expect(low < step.rate && step.rate < high, `${variant} step ${index} interval holds the rate`).toBe(true);
        });
        // The last step is the metric: its interval is the variant's posterior interval (the same Beta posterior).
        expect(entry.steps.at(-1).rate_interval_95).toEqual(entry.posterior.credible_interval_95);
        reached.push(...counts);
      }
      return reached;
    }

    function expectRetention(perVariant: any[], window: { from: number; to: number }, eventKey: string | null): number {
      let pending = 0;
      for (const variant of ['control', 'treatment']) {
        const members = inVariant(variant);
        const eligible = members.filter((unit) => unit.exposedAt + window.to <= now);
        const entry = byVariant(perVariant, variant);
        expect(entry.sample_size, `${variant} eligible units`).toBe(eligible.length);
        expect(entry.pending_units, `${variant} pending units`).toBe(members.length - eligible.length);
        expect(entry.conversions, `${variant} retained`).toBe(eligible.filter((unit) => retained(unit, window, eventKey)).length);
        expect(entry.observed_rate).toBeCloseTo(entry.conversions / eligible.length, 12);
        pending += members.length - eligible.length;
      }
      return pending;
    }

    for (const mode of ['full', 'incremental'] as const) {
      it(`counts every step and retained unit as the definitions do (${mode})`, async () => {
        const snapshot = await compute(server(), key, experiment.id, mode);
        expect(snapshot.primary_metric).toMatchObject({ key: 'checkout', kind: 'funnel' });
        const reached = expectFunnel(snapshot.per_variant, FUNNEL_STEPS, FUNNEL_WINDOW);
        // The data drop units at every step, so agreement is over something.
        const perStep = FUNNEL_STEPS.map((_, index) => (reached[index] as number) + (reached[index + FUNNEL_STEPS.length] as number));
        expect(Math.min(...perStep), 'units reach every step').toBeGreaterThan(0);
        expect(perStep.at(-1), 'units drop off').toBeLessThan(perStep[0] as number);
        expect(byVariant(snapshot.per_variant, 'treatment').effect).not.toBeNull();
        const [back] = snapshot.guardrails;
        expect(back.metric_key).toBe('back');
        expect(expectRetention(back.per_variant, RETENTION.any, null), 'units still in their window').toBeGreaterThan(0);
        const [viewed, flagged] = snapshot.secondary_metrics;
        expect(viewed).toMatchObject({ key: 'viewed', kind: 'retention' });
        expectRetention(viewed.per_variant, RETENTION.view, 'view');
        expect(flagged).toMatchObject({ key: 'flagged', kind: 'funnel' });
        expectFunnel(flagged.per_variant, FLAG_STEPS, DAY);
        expect(snapshot.primary_metric.cuped.applied).toBe(false);
      });
    }
  },
  { clock },
);
