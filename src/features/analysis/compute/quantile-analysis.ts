/**
 * A quantile metric's results per variant (docs/statistics.md "Quantile metrics"): each
 * variant's quantile is a normal estimate with its standard error, so prob_best, the loss and the
 * effect (the relative difference of the quantiles with the delta method's interval) come from
 * the same normal comparison as a mean's, in the metric's direction.
 */
import { analyzeNormalArms, type QuantileEstimate, type VariantAnalysis } from '../../../stats/index.js';
import type { MetricRow } from '../../metrics/read.js';
import type { Variant } from '../../experiments/schemas.js';
import type { CupedReport, VariantPosterior } from '../schemas.js';
import type { CupedSettings } from './cuped-analysis.js';

/** Each variant's estimate, by variant key. */
export type QuantileEstimates = Readonly<Record<string, QuantileEstimate>>;

const EMPTY: QuantileEstimate = { value: null, values: 0, units: 0, sigma: null, interval_95: null, standard_error: null };

export function analyzeQuantile(metric: MetricRow, variants: readonly Variant[], estimates: QuantileEstimates): VariantAnalysis[] {
  return analyzeNormalArms(
    variants.map((variant) => {
      const estimate = estimates[variant.key] ?? EMPTY;
      const se = estimate.value === null ? null : estimate.standard_error;
      return {
        variant_key: variant.key,
        is_control: variant.is_control,
        sample_size: estimate.units,
        mean: estimate.value ?? 0,
        unit_variance: null,
        variance_of_mean: se === null ? null : se * se,
      };
    }),
    { higherIsBetter: metric.higher_is_better === 1 },
  );
}

/** The posterior with the variant's `quantile` beside it; no value, no mean. */
export function withQuantile(posterior: VariantPosterior, metric: MetricRow, estimates: QuantileEstimates): VariantPosterior {
  const estimate = estimates[posterior.variant_key] ?? EMPTY;
  const quantile = {
    q: metric.quantile ?? 0.5,
    level: metric.quantile_level ?? 'event',
    value: estimate.value,
    values: estimate.values,
    units: estimate.units,
    interval_95: estimate.interval_95,
    standard_error: estimate.standard_error,
  };
  if (estimate.value !== null) return { ...posterior, quantile };
  return { ...posterior, observed_rate: null, posterior: { mean: null, credible_interval_95: null }, quantile };
}

export const QUANTILE_NOT_ADJUSTED = 'quantile metrics are left unadjusted (CUPED adjusts means)';

export function quantileCupedReport(settings: CupedSettings): CupedReport {
  return { applied: false, lookback_days: settings.lookback_days, theta: null, variance_reduction: null, note: QUANTILE_NOT_ADJUSTED };
}
