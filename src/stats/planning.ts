/**
 * A plan for one metric (docs/statistics.md "9a. Planning an experiment"): from the power
 * formulas of power.ts, the experiment's weights and its daily traffic, the units and days a rule
 * needs to detect an MDE, the MDE it reaches on each day, and its power on each day.
 *
 * Units enter the experiment at `dailyUnits` a day and split by weight: after d days the smallest
 * arm holds d * dailyUnits * w_min / W units (W the sum of the weights), the others in proportion.
 */
import {
  DEFAULT_POWER,
  baselineForLift,
  estimateUnitsPerVariant,
  powerAtUnits,
  reachableMde,
  type Allocation,
  type MetricBaseline,
  type PowerQuestion,
} from './power.js';
import type { DecisionRuleSettings } from './types.js';

export interface PlanWeights {
  /** The control's weight (a percentage). */
  control: number;
  /** Each treatment's weight; treatments with weight 0 get no units and are left out. */
  treatments: readonly number[];
}

export interface PlanInput {
  /** The rule, its minimum_detectable_effect the lift to detect. */
  rule: DecisionRuleSettings;
  weights: PlanWeights;
  metric: MetricBaseline;
  /** New units a day entering the experiment (every variant together); null when unknown. */
  dailyUnits: number | null;
  /** Days the by-day series cover (1 .. horizonDays). */
  horizonDays: number;
  power?: number;
}

export interface MetricPlan {
  /** Units the smallest arm needs (every arm with equal weights); null above a billion. */
  units_per_variant: number | null;
  /** Units of every variant together at that point. */
  total_units: number | null;
  /** Days until the smallest arm holds units_per_variant; null without traffic or estimate. */
  days_needed: number | null;
  mde_by_day: Array<{ day: number; mde: number | null }>;
  power_by_day: Array<{ day: number; power: number }>;
}

const totalWeightOf = (weights: PlanWeights) => weights.control + weights.treatments.reduce((sum, weight) => sum + weight, 0);

/** The arms that get units: the allocation power.ts splits them by, and the count alpha is split over. */
function questionOf(input: Omit<PlanInput, 'horizonDays' | 'dailyUnits'>, rule: DecisionRuleSettings): Omit<PowerQuestion, 'baseline'> {
  const treatments = input.weights.treatments.filter((weight) => weight > 0);
  const allocation: Allocation = { control: input.weights.control, treatments };
  return { rule, variantCount: treatments.length + 1, allocation, power: input.power ?? DEFAULT_POWER };
}

/** Units in the smallest arm after `days` at `dailyUnits` a day. */
export function smallestArmUnits(weights: PlanWeights, dailyUnits: number, days: number): number {
  const positive = [weights.control, ...weights.treatments.filter((weight) => weight > 0)];
  return (days * dailyUnits * Math.min(...positive)) / totalWeightOf(weights);
}

/** Units of every arm together when the smallest holds `unitsPerVariant`. */
export function totalUnitsAt(weights: PlanWeights, unitsPerVariant: number): number {
  const positive = [weights.control, ...weights.treatments.filter((weight) => weight > 0)];
  return Math.ceil((unitsPerVariant * totalWeightOf(weights)) / Math.min(...positive));
}

/** Units the smallest arm needs for the rule to detect its MDE with the target power (power.ts's estimate). */
export function unitsNeeded(input: Omit<PlanInput, 'horizonDays' | 'dailyUnits'>): number | null {
  const question = questionOf(input, input.rule);
  return estimateUnitsPerVariant({ ...question, baseline: baselineForLift(input.metric, input.rule.minimum_detectable_effect) });
}

/** The MDE the rule detects with the target power once the smallest arm holds `unitsPerVariant`. */
export function mdeAtUnits(input: Omit<PlanInput, 'horizonDays' | 'dailyUnits'>, unitsPerVariant: number): number | null {
  return reachableMde(questionOf(input, input.rule), input.metric, unitsPerVariant);
}

/** No estimate above this: a plan of more than a million days is "never". */
const MAX_DAYS = 1e6;

function daysFor(total: number, daily: number): number | null {
  const days = Math.max(1, Math.ceil(total / daily));
  return Number.isFinite(days) && days <= MAX_DAYS ? days : null;
}

/** The plan of one metric: units and days to detect the rule's MDE, and the by-day series. */
export function planMetric(input: PlanInput): MetricPlan {
  const question = { ...questionOf(input, input.rule), baseline: baselineForLift(input.metric, input.rule.minimum_detectable_effect) };
  const units = estimateUnitsPerVariant(question);
  const total = units === null ? null : totalUnitsAt(input.weights, units);
  const daily = input.dailyUnits !== null && input.dailyUnits > 0 ? input.dailyUnits : null;
  const days = total === null || daily === null ? null : daysFor(total, daily);
  const dayList = Array.from({ length: daily === null ? 0 : Math.max(0, Math.floor(input.horizonDays)) }, (_, index) => index + 1);
  const armAt = (day: number) => smallestArmUnits(input.weights, daily as number, day);
  return {
    units_per_variant: units,
    total_units: total,
    days_needed: days,
    mde_by_day: dayList.map((day) => ({ day, mde: mdeAtUnits(input, armAt(day)) })),
    power_by_day: dayList.map((day) => ({ day, power: powerAtUnits(question, armAt(day)) })),
  };
}

/** The MDE the rule detects with the target power after `days` days of traffic; null without traffic. */
export function mdeAfterDays(input: Omit<PlanInput, 'horizonDays'>, days: number): number | null {
  if (input.dailyUnits === null || !(input.dailyUnits > 0)) return null;
  return mdeAtUnits(input, smallestArmUnits(input.weights, input.dailyUnits, days));
}
