/**
 * Planning warnings on an experiment: things about its settings a person should know before
 * trusting its verdict. Computed from the stored definition on every read, never stored, so a
 * change of the rule or of the weights updates them at once.
 */
import Type, { type Static } from 'typebox';
import { DEFAULT_POWER, binaryBaseline, estimateUnitsPerVariant } from '../../stats/power.js';
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
    assumed_baseline_rate: Type.Number({ description: 'the conversion rate the estimate assumes (0.5, the least noisy; lower rates need more)' }),
  },
  { description: 'see docs/statistics.md section 9' },
);
export type ExperimentWarning = Static<typeof ExperimentWarningSchema>;

/**
 * Why 50%: Verdict does not know the metric's baseline when the experiment is planned. The units
 * needed grow with the per-unit variance relative to the mean squared, (1 - p) / p for a
 * conversion rate p, which is smallest at 50% among rates up to 50% (and below 1 for most revenue
 * and count metrics too). So the estimate is a floor: when even it is far above
 * min_sample_per_variant, the warning cannot be a false alarm for such metrics.
 */
export const ASSUMED_BASELINE_RATE = 0.5;
/** A typical conversion rate, quoted in the message to show how much more a real metric needs. */
const TYPICAL_BASELINE_RATE = 0.1;
/** "Far more": warn when the estimate exceeds min_sample_per_variant by more than this factor. */
export const FAR_ABOVE_FACTOR = 2;

const count = (units: number | null) => (units === null ? 'more than a billion' : `about ${units.toLocaleString('en-US')}`);

const RULE_HINTS: Record<DecisionRule['method'], string> = {
  'bayesian.posterior_threshold': 'the rule may not declare a winner at min_sample_per_variant even when the lift is real',
  'bayesian.always_valid_evalue': 'the e-value is tuned to 2 x min_sample_per_variant units and needs far more to detect such a lift',
  'frequentist.sequential_msprt':
    'the mSPRT mixture is tuned to the MDE, so it is slow to detect larger lifts too (docs/statistics.md section 9)',
};

/** An `underpowered` warning when the rule needs far more units than min_sample_per_variant. */
export function experimentWarnings(rule: DecisionRule, variants: readonly Variant[]): ExperimentWarning[] {
  const variantCount = Math.max(variants.filter((variant) => variant.weight > 0).length, 2);
  const estimateAt = (rate: number) => estimateUnitsPerVariant({ rule, variantCount, baseline: binaryBaseline(rate, rule.minimum_detectable_effect) });
  const estimate = estimateAt(ASSUMED_BASELINE_RATE);
  if (estimate !== null && estimate <= FAR_ABOVE_FACTOR * rule.min_sample_per_variant) return [];
  const ratio = estimate === null ? '' : ` (${(estimate / rule.min_sample_per_variant).toFixed(1)} x)`;
  const lift = `${+(rule.minimum_detectable_effect * 100).toPrecision(4)}%`;
  const message =
    `${rule.method} with minimum_detectable_effect ${rule.minimum_detectable_effect} needs ${count(estimate)} units per variant ` +
    `to detect a ${lift} lift with ${DEFAULT_POWER * 100}% power, far more than min_sample_per_variant ${rule.min_sample_per_variant}${ratio}: ` +
    `${RULE_HINTS[rule.method]}. That is for a conversion rate of 50%, the least noisy; at ${TYPICAL_BASELINE_RATE * 100}% it is ` +
    `${count(estimateAt(TYPICAL_BASELINE_RATE))}. Raise min_sample_per_variant to plan for it, or accept a larger minimum_detectable_effect.`;
  return [
    {
      code: 'underpowered',
      message,
      estimated_units_per_variant: estimate,
      min_sample_per_variant: rule.min_sample_per_variant,
      power: DEFAULT_POWER,
      assumed_baseline_rate: ASSUMED_BASELINE_RATE,
    },
  ];
}
