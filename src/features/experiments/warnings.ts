/**
 * Planning warnings on an experiment: things about its settings a person should know before
 * trusting its verdict. Computed from the stored definition on every read, never stored, so a
 * change of the rule or of the weights updates them at once.
 */
import Type, { type Static } from 'typebox';
import { DEFAULT_POWER, baselineForLift, binaryBaseline, estimateUnitsPerVariant, type MetricBaseline } from '../../stats/power.js';
import { ruleName, unitsText } from '../../stats/rule-words.js';
import type { ExperimentStatus } from '../../db/tables/experiments.js';
import type { MetricRow } from '../metrics/read.js';
import type { DecisionRule, Variant } from './schemas.js';

export const ExperimentWarningSchema = Type.Object(
  {
    code: Type.Literal('underpowered', { description: 'stable, machine-readable' }),
    message: Type.String({ description: 'for a person: what is wrong, the estimate, what to do' }),
    estimated_units_per_variant: Type.Union([Type.Integer(), Type.Null()], {
      description: 'units each variant needs for the rule to detect a lift of minimum_detectable_effect with 80% power; null above a billion',
    }),
    min_sample_per_variant: Type.Integer(),
    power: Type.Number({ description: 'the power the estimate is for' }),
    assumed_baseline_rate: Type.Union([Type.Number(), Type.Null()], {
      description:
        'the conversion rate the estimate assumes (0.1) when the primary metric has no history in the environment; null when the estimate is from its history',
    }),
    baseline_source: Type.Optional(Type.Enum(['history', 'assumed'], { description: 'history: the primary metric’s last 14 days in the environment' })),
    baseline_mean: Type.Optional(Type.Number({ description: 'the per-unit mean the estimate is for (the conversion rate of a binary metric)' })),
  },
  { description: 'see docs/statistics.md section 9' },
);
export type ExperimentWarning = Static<typeof ExperimentWarningSchema>;

/**
 * Without the primary metric's history (no events in the environment's last 14 days), the estimate
 * assumes a binary metric converting at 10%, a typical conversion rate. The units needed grow with
 * (1 - p) / p for a rate p (about 19 at 5%, 9 at 10%, 1 at 50%), so the message also gives the
 * figure at 50%, the least noisy rate up to 50%: a floor for such metrics.
 */
export const ASSUMED_BASELINE_RATE = 0.1;
const LEAST_NOISY_RATE = 0.5;
/** "Far more": warn when the estimate exceeds min_sample_per_variant by more than this factor. */
export const FAR_ABOVE_FACTOR = 2;

const count = (units: number | null) => (units === null ? 'more than a billion' : `about ${units.toLocaleString('en-US')}`);

const RULE_HINTS: Record<DecisionRule['method'], string> = {
  'bayesian.posterior_threshold': 'With fewer units the rule will often declare no winner even when the lift is real.',
  'bayesian.always_valid_evalue':
    'The e-value is tuned to twice the planned minimum sample, and short of the estimate it rarely reaches the evidence the rule asks for.',
  'frequentist.sequential_msprt': 'The mSPRT mixture is tuned to the minimum detectable effect, so it is slow to detect larger lifts too.',
};

/** What the warning needs to know beyond the rule: whether it still matters, and the primary metric's kind. */
export interface PlanningContext {
  status: ExperimentStatus;
  /**
   * The primary metric's kind; null without a primary metric; undefined when the caller did not
   * look it up (then, as without one, the binary planning assumption holds).
   */
  primaryMetricKind?: MetricRow['kind'] | null | undefined;
  /**
   * The primary metric's baseline from its history in the environment (planning/warning-baselines.ts),
   * or null/undefined without one: then the binary assumption holds.
   */
  history?: HistoryBaselineFacts | null | undefined;
}

/** A baseline from history and what it rests on. */
export interface HistoryBaselineFacts extends MetricBaseline {
  units: number;
  days: number;
}

/**
 * Why no warning for some experiments. A stopped or archived experiment is past planning. For a
 * count, revenue, duration or ratio metric the units needed depend on the metric's variance,
 * which its definition does not give: assuming a 10% conversion rate there would be a made-up
 * figure, so Verdict does not estimate (docs/statistics.md section 9).
 */
function estimable(context: PlanningContext): boolean {
  if (context.status === 'stopped' || context.status === 'archived') return false;
  if (context.history) return true;
  return context.primaryMetricKind === undefined || context.primaryMetricKind === null || context.primaryMetricKind === 'binary';
}

const number = (value: number) => (Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : `${+value.toPrecision(3)}`);

/** The warning from the metric's history: the same estimate at its own mean and variance. */
function historyWarning(rule: DecisionRule, variantCount: number, history: HistoryBaselineFacts): ExperimentWarning[] {
  const estimate = estimateUnitsPerVariant({ rule, variantCount, baseline: baselineForLift(history, rule.minimum_detectable_effect) });
  if (estimate !== null && estimate <= FAR_ABOVE_FACTOR * rule.min_sample_per_variant) return [];
  const ratio = estimate === null ? ', far more than' : `: ${(estimate / rule.min_sample_per_variant).toFixed(1)} times`;
  const lift = `${+(rule.minimum_detectable_effect * 100).toPrecision(4)}%`;
  const described = ruleName(rule.method);
  const basis = history.binary
    ? `${+(history.mean * 100).toPrecision(3)}% conversion rate`
    : `mean of ${number(history.mean)} (standard deviation ${number(Math.sqrt(history.variance))})`;
  const message =
    `${described.charAt(0).toUpperCase()}${described.slice(1)} needs ${count(estimate)} units per variant ` +
    `to detect a ${lift} lift (the minimum detectable effect) with ${DEFAULT_POWER * 100}% power, at the primary metric’s ${basis} ` +
    `over the last ${history.days} days (${unitsText(history.units)} units)${ratio} the planned minimum sample of ${unitsText(rule.min_sample_per_variant)} units per variant. ` +
    `${RULE_HINTS[rule.method]} Raise the minimum sample per variant to plan for it, or choose a larger minimum detectable effect.`;
  return [
    {
      code: 'underpowered',
      message,
      estimated_units_per_variant: estimate,
      min_sample_per_variant: rule.min_sample_per_variant,
      power: DEFAULT_POWER,
      assumed_baseline_rate: null,
      baseline_source: 'history',
      baseline_mean: history.mean,
    },
  ];
}

/** An `underpowered` warning when the rule needs far more units than min_sample_per_variant. */
export function experimentWarnings(rule: DecisionRule, variants: readonly Variant[], context: PlanningContext): ExperimentWarning[] {
  if (!estimable(context)) return [];
  const variantCount = Math.max(variants.filter((variant) => variant.weight > 0).length, 2);
  if (context.history) return historyWarning(rule, variantCount, context.history);
  const estimateAt = (rate: number) => estimateUnitsPerVariant({ rule, variantCount, baseline: binaryBaseline(rate, rule.minimum_detectable_effect) });
  const estimate = estimateAt(ASSUMED_BASELINE_RATE);
  if (estimate !== null && estimate <= FAR_ABOVE_FACTOR * rule.min_sample_per_variant) return [];
  const ratio = estimate === null ? ', far more than' : `: ${(estimate / rule.min_sample_per_variant).toFixed(1)} times`;
  const lift = `${+(rule.minimum_detectable_effect * 100).toPrecision(4)}%`;
  const described = ruleName(rule.method);
  const message =
    `${described.charAt(0).toUpperCase()}${described.slice(1)} needs ${count(estimate)} units per variant ` +
    `to detect a ${lift} lift (the minimum detectable effect) with ${DEFAULT_POWER * 100}% power, assuming a ${ASSUMED_BASELINE_RATE * 100}% conversion rate${ratio} ` +
    `the planned minimum sample of ${unitsText(rule.min_sample_per_variant)} units per variant. Even at ${LEAST_NOISY_RATE * 100}%, the least noisy rate, it needs ` +
    `${count(estimateAt(LEAST_NOISY_RATE))}. ${RULE_HINTS[rule.method]} ` +
    'Raise the minimum sample per variant to plan for it, or choose a larger minimum detectable effect.';
  return [
    {
      code: 'underpowered',
      message,
      estimated_units_per_variant: estimate,
      min_sample_per_variant: rule.min_sample_per_variant,
      power: DEFAULT_POWER,
      assumed_baseline_rate: ASSUMED_BASELINE_RATE,
      baseline_source: 'assumed',
      baseline_mean: ASSUMED_BASELINE_RATE,
    },
  ];
}
