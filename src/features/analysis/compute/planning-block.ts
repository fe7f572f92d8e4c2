/**
 * A snapshot's `planning` block (docs/statistics.md "9a. Planning an experiment"): how far the
 * experiment is from its planned sample and from detecting its MDE, at the traffic it has seen.
 * The primary metric's baseline is the control's own per-unit mean and variance so far (CUPED-
 * adjusted when the experiment uses it); the formulas are power.ts's, as for the planning
 * endpoint and the `underpowered` warning.
 */
import type { PlanningBlock } from '../planning-schema.js';
import { baselineFromHistory } from '../../../stats/history-baseline.js';
import { mdeAtUnits, unitsNeeded, type PlanWeights } from '../../../stats/planning.js';
import { resolveDecisionRule } from '../../../stats/decision.js';
import type { DecisionRuleSettings } from '../../../stats/types.js';
import type { Experiment } from '../../experiments/schemas.js';
import { plannedSamplePerVariant } from './recommendation.js';
import type { MetricRow } from '../../metrics/read.js';
import type { Variant } from '../../experiments/schemas.js';
import type { VariantTotals } from '../store/contract.js';

export interface PlanningBlockInput {
  rule: DecisionRuleSettings;
  variants: readonly Variant[];
  totals: ReadonlyMap<string, VariantTotals>;
  /** The primary metric (its totals at index 0), or null. */
  primary: Pick<MetricRow, 'kind'> | null;
  cuped: boolean;
  daysElapsed: number;
}

/** Days at `perDay` until `have` reaches `need`: 0 when it has, null without traffic. */
function daysUntil(have: number, need: number, perDay: number): number | null {
  if (have >= need) return 0;
  return perDay > 0 ? (need - have) / perDay : null;
}

function weightsOf(variants: readonly Variant[]): PlanWeights {
  const control = variants.find((variant) => variant.is_control) ?? variants[0];
  return { control: control?.weight ?? 0, treatments: variants.filter((variant) => variant !== control).map((variant) => variant.weight) };
}

export function planningBlock(input: PlanningBlockInput): PlanningBlock {
  const weighted = input.variants.filter((variant) => variant.weight > 0);
  const unitsOf = (variant: Variant) => input.totals.get(variant.key)?.units ?? 0;
  const days = input.daysElapsed;
  const total = input.variants.reduce((sum, variant) => sum + unitsOf(variant), 0);
  const timed = days > 0 && total > 0;
  const remaining = weighted.map((variant) => (timed ? daysUntil(unitsOf(variant), input.rule.min_sample_per_variant, unitsOf(variant) / days) : null));
  const block: PlanningBlock = {
    days_elapsed: days,
    daily_units: timed ? total / days : null,
    days_remaining: remaining.some((value) => value === null) || remaining.length === 0 ? null : Math.max(...(remaining as number[])),
    mde_at_current_sample: null,
    expected_days_to_mde: null,
  };
  const weights = weightsOf(input.variants);
  const control = input.variants.find((variant) => variant.is_control) ?? input.variants[0];
  const sums = control ? input.totals.get(control.key)?.metrics[0] : undefined;
  // A quantile has no per-unit mean and variance to plan with.
  if (!input.primary || input.primary.kind === 'quantile' || !sums || weights.control === 0 || weighted.length < 2) return block;
  const metric = baselineFromHistory(input.primary.kind, sums, input.cuped);
  if (!metric) return block;
  const plan = { rule: input.rule, weights, metric };
  // The smallest arm, as the weights make it (the observed split may stray a little).
  const smallest = Math.min(...weighted.map(unitsOf));
  const needed = unitsNeeded(plan);
  const smallestPerDay = timed ? smallest / days : 0;
  return {
    ...block,
    mde_at_current_sample: smallest > 0 ? mdeAtUnits(plan, smallest) : null,
    expected_days_to_mde: needed === null ? null : daysUntil(smallest, needed, smallestPerDay),
  };
}

/** The block of a snapshot of `experiment`: its rule with the planned minimum sample (a bandit's own), its variants and weights. */
export function planningBlockOf(experiment: Experiment, input: Omit<PlanningBlockInput, 'rule' | 'variants'>): PlanningBlock {
  const rule = resolveDecisionRule({ ...experiment.decision_rule, min_sample_per_variant: plannedSamplePerVariant(experiment) });
  return planningBlock({ ...input, rule, variants: experiment.variants });
}
