/**
 * The analysis of a bandit (docs/statistics.md "10. Bandits"): the primary metric's estimate per
 * variant is stratified by allocation period, prob_best and the effects come from those
 * estimates, SRM compares the units with what each period's weights should have sent, and the
 * decision is the bandit's stopping rule (a variant's prob_best reaching stop_at_prob_best). Pure:
 * the per-period totals come from period-totals.ts.
 */
import {
  analyzeNormalArms,
  banditExpectedUnits,
  chanceText,
  daysText,
  momentsFromSums,
  sampleRatioMismatch,
  stratifiedEstimates,
  type Decision,
  type SrmResult,
  type SufficientStats,
  type VariantAnalysis,
} from '../../../stats/index.js';
import type { StoredPeriod } from '../../experiments/allocation.js';
import type { Variant } from '../../experiments/schemas.js';
import type { VariantPosterior } from '../schemas.js';

export interface BanditInput {
  stopAtProbBest: number;
  periods: readonly StoredPeriod[];
  /** variant key -> units per period (every live exposure). */
  units: ReadonlyMap<string, readonly number[]>;
  /** variant key -> the primary metric's sums per period. */
  cells: ReadonlyMap<string, readonly SufficientStats[]>;
}

function pooled(cells: readonly SufficientStats[]): SufficientStats {
  return cells.reduce((total, cell) => ({ n: total.n + cell.n, sum: total.sum + cell.sum, sumOfSquares: total.sumOfSquares + cell.sumOfSquares }), {
    n: 0,
    sum: 0,
    sumOfSquares: 0,
  });
}

/**
 * The primary metric's analyses from the period-stratified normal posteriors N(Σ_p w_p x̄_vp,
 * Σ_p w_p² s²_vp / n_vp); `observed_rate` is the stratified mean, `conversions` the pooled count.
 */
export function banditPrimary(
  variants: readonly Variant[],
  bandit: BanditInput,
  higherIsBetter: boolean,
  conversionsOf: (variantKey: string) => number,
): { analyses: VariantAnalysis[]; posteriors: VariantPosterior[] } {
  const cells = variants.map((variant) => bandit.cells.get(variant.key) ?? []);
  const estimates = stratifiedEstimates(cells);
  const arms = variants.map((variant, index) => {
    const estimate = estimates[index] as (typeof estimates)[number];
    return {
      variant_key: variant.key,
      is_control: variant.is_control,
      sample_size: estimate.n,
      mean: estimate.mean,
      unit_variance: estimate.n > 1 ? momentsFromSums(pooled(cells[index] ?? [])).variance : null,
      variance_of_mean: estimate.varianceOfMean,
    };
  });
  const analyses = analyzeNormalArms(arms, { higherIsBetter });
  const posteriors = analyses.map((analysis): VariantPosterior => ({
    variant_key: analysis.variant_key,
    is_control: analysis.is_control,
    sample_size: analysis.sample_size,
    conversions: conversionsOf(analysis.variant_key),
    observed_rate: analysis.observed_rate,
    posterior: { mean: analysis.posterior.mean, credible_interval_95: analysis.posterior.credible_interval_95 },
    prob_best: analysis.prob_best,
    expected_loss_if_stop_now: analysis.expected_loss_if_stop_now,
    effect: analysis.effect,
  }));
  return { analyses, posteriors };
}

/**
 * The split the period weights should have produced, Σ_p N_p·w_vp per variant: the expected units
 * of the overall SRM check, and, as proportions, the weights each breakdown slice's SRM is tested
 * against (a slice is assumed to spread over the periods as the whole experiment does; its own
 * per-period counts are not kept). Null before any unit is exposed.
 */
export function banditSrmWeights(variants: readonly Variant[], bandit: BanditInput): number[] | null {
  const periodCount = bandit.periods.length;
  const periodUnits = Array.from({ length: periodCount }, (_, p) => variants.reduce((sum, variant) => sum + (bandit.units.get(variant.key)?.[p] ?? 0), 0));
  const periodWeights = bandit.periods.map((period) => variants.map((variant) => period.weights[variant.key] ?? 0));
  const expected = banditExpectedUnits(periodUnits, periodWeights);
  return expected.some((units) => units > 0) ? expected : null;
}

/** SRM of the observed units against Σ_p N_p·w_vp, the units each period's weights should have sent. */
export function banditSrm(variants: readonly Variant[], bandit: BanditInput): SrmResult {
  const expected = banditSrmWeights(variants, bandit) ?? variants.map(() => 0);
  const observed = variants.map((variant) => (bandit.units.get(variant.key) ?? []).reduce((sum, n) => sum + n, 0));
  return sampleRatioMismatch(observed, expected);
}

/**
 * The bandit's stopping rule: the variant whose prob_best reached stop_at_prob_best is the winner.
 * Not an always-valid test: it is checked at every snapshot on data the bandit steered.
 */
export function banditDecision(analyses: readonly VariantAnalysis[], stopAt: number, daysElapsed: number, maxDurationDays: number): Decision {
  const ranked = analyses.filter((analysis) => analysis.prob_best !== null).sort((a, b) => (b.prob_best as number) - (a.prob_best as number));
  const best = ranked[0];
  const bestText = best ? `${best.variant_key}, ${chanceText(best.prob_best as number)}` : 'none computed yet';
  if (best && (best.prob_best as number) >= stopAt) {
    const reason = `the bandit's stopping rule: ${best.variant_key} has a ${chanceText(best.prob_best as number)} chance of being best, at least the ${chanceText(stopAt)} set to name a winner (not an always-valid test)`;
    return { satisfied: true, verdict: 'winner', variant_key: best.variant_key, reason };
  }
  if (daysElapsed >= maxDurationDays) {
    return {
      satisfied: false,
      verdict: 'max_duration_reached',
      variant_key: null,
      reason: `the planned maximum of ${daysText(maxDurationDays)} is over; the best chance of being best: ${bestText}`,
    };
  }
  return {
    satisfied: false,
    verdict: 'keep_running',
    variant_key: null,
    reason: `no variant's chance of being best has reached the ${chanceText(stopAt)} set to name a winner yet (best: ${bestText})`,
  };
}
