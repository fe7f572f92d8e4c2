/**
 * POST /v1/planning/power (docs/experiments.md "Planning"): per metric, the units and days the
 * decision rule needs to detect an MDE with the planned power, the MDE reachable by day and the
 * power by day, from the metric's history in the environment or a given baseline, and the
 * traffic from history or given. The formulas are power.ts's, the ones the `underpowered` warning
 * and the snapshots' `planning` block use.
 */
import { problems, type FieldError } from '../../http/problems.js';
import { resolveDecisionRule } from '../../stats/decision.js';
import { mdeAfterDays, planMetric, type MetricPlan, type PlanWeights } from '../../stats/planning.js';
import { DEFAULT_POWER, type MetricBaseline } from '../../stats/power.js';
import type { DecisionRuleSettings } from '../../stats/types.js';
import { findEnvironment } from '../environments/read.js';
import { findMetricsByIds, type MetricRow } from '../metrics/read.js';
import { audienceErrors, variantErrors } from '../experiments/rules.js';
import { CUPED_LOOKBACK_DAYS } from '../experiments/schemas.js';
import type { PlanningDeps } from './deps.js';
import { DAY_MS, readHistory, type History } from './history.js';
import { HISTORY_DAYS, MAX_HORIZON_DAYS, type PlanningPower, type PlanningPowerInput } from './schemas.js';
import { planSummary } from './words.js';

/** The control's weight and the treatments', in the request's order; the control is the marked variant or the first. */
export function weightsOf(variants: PlanningPowerInput['variants']): PlanWeights {
  const controlIndex = Math.max(
    variants.findIndex((variant) => variant.is_control === true),
    0,
  );
  return {
    control: variants[controlIndex]?.weight ?? 0,
    treatments: variants.filter((_, index) => index !== controlIndex).map((variant) => variant.weight),
  };
}

function requestErrors(input: PlanningPowerInput): FieldError[] {
  const errors = [...variantErrors(input.variants.map((variant) => ({ ...variant }))), ...audienceErrors(input.audience)];
  const weights = weightsOf(input.variants);
  if (weights.control === 0) errors.push({ pointer: '/variants', message: 'the control needs a weight above 0' });
  if (!weights.treatments.some((weight) => weight > 0)) errors.push({ pointer: '/variants', message: 'at least one treatment needs a weight above 0' });
  if (input.minimum_detectable_effect !== undefined && input.duration_days !== undefined) {
    errors.push({ pointer: '/duration_days', message: 'give minimum_detectable_effect or duration_days, not both' });
  }
  const fromHistory = input.baseline === undefined || input.daily_units === undefined;
  if (input.audience && fromHistory) {
    errors.push({
      pointer: '/audience',
      message: 'history keeps no unit attributes, so it cannot be restricted to an audience: give daily_units (the audience’s traffic) and baseline',
    });
  }
  return errors;
}

async function metricsOf(ctx: PlanningDeps, workspaceId: string, input: PlanningPowerInput): Promise<MetricRow[]> {
  const errors: FieldError[] = [];
  if (!(await findEnvironment(ctx.db, workspaceId, input.environment_id))) {
    errors.push({ pointer: '/environment_id', message: `no environment with id ${input.environment_id} in this workspace` });
  }
  const found = new Map((await findMetricsByIds(ctx.db, workspaceId, input.metric_ids)).map((metric) => [metric.id, metric]));
  input.metric_ids.forEach((id, index) => {
    if (!found.has(id)) errors.push({ pointer: `/metric_ids/${index}`, message: `no metric with id ${id} in this workspace` });
  });
  if (errors.length > 0) throw problems.validation(errors);
  return [...new Set(input.metric_ids)].map((id) => found.get(id) as MetricRow);
}

interface Inputs {
  rule: DecisionRuleSettings;
  weights: PlanWeights;
  power: number;
  days: number;
  history: History | null;
  from: number;
  to: number;
}

async function historyOf(ctx: PlanningDeps, workspaceId: string, input: PlanningPowerInput, metrics: readonly MetricRow[], days: number) {
  const to = ctx.clock.now();
  const from = to - days * DAY_MS;
  if (input.baseline !== undefined && input.daily_units !== undefined) return { history: null, from, to };
  const cuped = input.variance_reduction?.method === 'cuped';
  const lookbackMs = cuped ? (input.variance_reduction?.lookback_days ?? CUPED_LOOKBACK_DAYS.default) * DAY_MS : null;
  const scope = { workspaceId, environmentId: input.environment_id, from, to, lookbackMs };
  const history = await readHistory(ctx, scope, input.baseline === undefined ? metrics : []);
  if (history === null) {
    throw problems.validation([
      {
        pointer: input.baseline === undefined ? '/baseline' : '/daily_units',
        message: 'this server’s analysis store does not read history: give baseline and daily_units',
      },
    ]);
  }
  return { history, from, to };
}

/**
 * A given baseline. For a binary metric given as a rate with variance p (1 - p), a treatment's
 * variance follows its rate, as in the `underpowered` warning; any other variance is used as is.
 */
function givenBaseline(given: { mean: number; variance: number }, metric: MetricRow): MetricBaseline {
  const bernoulli = Math.abs(given.variance - given.mean * (1 - given.mean)) <= 1e-12;
  return { mean: given.mean, variance: given.variance, binary: metric.kind === 'binary' && bernoulli };
}

/** Each metric's baseline and the daily traffic, or the problems that say which are missing. */
function baselinesAndTraffic(input: PlanningPowerInput, metrics: readonly MetricRow[], inputs: Inputs) {
  const errors: FieldError[] = [];
  const baselines = metrics.map((metric, index) => {
    if (input.baseline) return givenBaseline(input.baseline, metric);
    const found = inputs.history?.metrics[index];
    if (!found?.baseline) {
      errors.push({
        pointer: `/metric_ids/${index}`,
        message:
          `metric "${metric.name}" has no history to plan with in the last ${inputs.days} days of this environment ` +
          `(${found?.units ?? 0} units, ${found?.events ?? 0} events): give a baseline {mean, variance} to plan with one of your own`,
      });
    }
    return found?.baseline ?? null;
  });
  const coverage = (input.coverage ?? 100) / 100;
  const daily = input.daily_units ?? ((inputs.history?.units ?? 0) / inputs.days) * coverage;
  if (!(daily > 0)) {
    errors.push({ pointer: '/daily_units', message: `no units were seen in the last ${inputs.days} days of this environment: give daily_units` });
  }
  if (errors.length > 0) throw problems.validation(errors);
  return { baselines: baselines as MetricBaseline[], daily };
}

function horizonOf(input: PlanningPowerInput, rule: DecisionRuleSettings, plans: readonly MetricPlan[]): number {
  if (input.horizon_days !== undefined) return input.horizon_days;
  if (input.duration_days !== undefined) return input.duration_days;
  const longest = Math.max(rule.max_duration_days, ...plans.map((plan) => plan.days_needed ?? 0));
  return Math.min(MAX_HORIZON_DAYS, longest);
}

/** One metric's plan at the MDE given (or the rule's), or at the MDE reachable in duration_days. */
function metricPlan(input: PlanningPowerInput, inputs: Inputs, metric: MetricBaseline, daily: number, horizon: number) {
  const base = { weights: inputs.weights, metric, dailyUnits: daily, power: inputs.power };
  const mde = input.duration_days === undefined ? inputs.rule.minimum_detectable_effect : mdeAfterDays({ ...base, rule: inputs.rule }, input.duration_days);
  const rule = mde === null ? inputs.rule : { ...inputs.rule, minimum_detectable_effect: mde };
  const plan = planMetric({ ...base, rule, horizonDays: horizon });
  return mde === null ? { mde, plan: { ...plan, units_per_variant: null, total_units: null, days_needed: null } } : { mde, plan };
}

export async function planPower(ctx: PlanningDeps, workspaceId: string, input: PlanningPowerInput): Promise<PlanningPower> {
  const errors = requestErrors(input);
  if (errors.length > 0) throw problems.validation(errors);
  const metrics = await metricsOf(ctx, workspaceId, input);
  const days = input.history_days ?? HISTORY_DAYS.default;
  const rule = resolveDecisionRule({
    ...input.decision_rule,
    ...(input.minimum_detectable_effect === undefined ? {} : { minimum_detectable_effect: input.minimum_detectable_effect }),
  });
  const { history, from, to } = await historyOf(ctx, workspaceId, input, metrics, days);
  const inputs: Inputs = { rule, weights: weightsOf(input.variants), power: input.power ?? DEFAULT_POWER, days, history, from, to };
  const { baselines, daily } = baselinesAndTraffic(input, metrics, inputs);
  const first = baselines.map((metric) => metricPlan(input, inputs, metric, daily, 1));
  const horizon = horizonOf(
    input,
    rule,
    first.map((item) => item.plan),
  );
  const planned = baselines.map((metric) => metricPlan(input, inputs, metric, daily, horizon));
  const answer: PlanningPower = {
    metrics: metrics.map((metric, index) => {
      const item = planned[index] as (typeof planned)[number];
      const baseline = baselines[index] as MetricBaseline;
      const found = history?.metrics[index];
      return {
        metric_id: metric.id,
        metric_name: metric.name,
        baseline: {
          mean: baseline.mean,
          variance: baseline.variance,
          units: input.baseline ? null : (found?.units ?? null),
          events: input.baseline ? null : (found?.events ?? null),
          source: input.baseline ? 'given' : 'history',
          variance_reduction: input.baseline ? null : (found?.baseline?.variance_reduction ?? null),
        },
        minimum_detectable_effect: item.mde,
        ...item.plan,
      };
    }),
    daily_units: {
      value: daily,
      source: input.daily_units === undefined ? 'history' : 'given',
      history_units: input.daily_units === undefined ? (history?.units ?? null) : null,
    },
    decision_rule: rule,
    power: inputs.power,
    history: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), days },
    summary: '',
  };
  return { ...answer, summary: planSummary(answer, input.duration_days ?? null) };
}
