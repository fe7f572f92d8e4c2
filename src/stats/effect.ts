/**
 * Effect of a variant against the control (docs/statistics.md "2a. Effect against the control"):
 * the posterior of the absolute difference (variant mean - control mean), of the relative difference
 * (variant mean / control mean - 1), and the chance that the variant beats the control in the
 * metric's direction.
 *
 * - Binary metrics: independent Beta posteriors. The intervals are the exact 2.5% and 97.5%
 *   quantiles of T - C and T / C - 1, from their CDFs written as one-dimensional integrals
 *   (F_{T-C}(d) = E_C[F_T(C + d)], F_{T/C}(r) = E_C[F_T(rC)]), evaluated by Gauss-Legendre
 *   quadrature and inverted by safeguarded Newton. The relative mean is E[T] E[1/C] - 1 with
 *   E[1/C] = (a + b - 1) / (a - 1) for C ~ Beta(a, b); it is infinite (null) when a <= 1, i.e.
 *   while the control has no conversion. chance_to_beat_control is Evan Miller's exact sum.
 * - Normal posteriors (count, revenue, duration, ratio metrics): T - C is normal, exactly. The
 *   relative effect uses the delta method on the ratio of means, as GrowthBook's gbstats does
 *   (`frequentist_diff`, `variance_of_ratios` with zero covariance):
 *       mean = (m_t - m_c) / m_c,  var = v_t / m_c^2 + v_c m_t^2 / m_c^4,
 *   where v are the variances of the means; interval mean +- 1.959964 sd. Null when m_c = 0.
 */
import betaDist from '@stdlib/stats-base-dists-beta';
import normalDist from '@stdlib/stats-base-dists-normal';
import { betaVariance, probGreaterBeta } from './beta.js';
import { Z_975 } from './normal.js';
import { compositeRule } from './quadrature.js';
import type { BetaParams, Interval, NormalParams } from './types.js';

export interface Effect {
  absolute: { mean: number; credible_interval_95: Interval };
  /** mean and interval are null when the control mean is 0 (or E[1/C] is infinite). */
  relative: { mean: number | null; credible_interval_95: Interval | null };
  chance_to_beat_control: number;
}

/** 32 panels of 16 points: 512 CDF calls per evaluation of a CDF of T - C or T / C. */
const PANELS = 32;
/** The outer integral runs between these quantiles of its posterior; the mass outside is < 2e-12. */
const TAIL = 1e-12;

/** One weighted node of the outer integral: a value of the narrower posterior and its weight. */
interface WeightedNodes {
  values: Float64Array;
  weights: Float64Array;
}

function outerNodes(params: BetaParams): WeightedNodes {
  // Panels of equal probability: where the inner CDF turns sharply (a ratio near C = 0), the
  // nodes are as dense as the outer posterior's mass.
  const breaks = Array.from({ length: PANELS + 1 }, (_, k) => betaDist.quantile(Math.min(1 - TAIL, Math.max(TAIL, k / PANELS)), params.alpha, params.beta));
  const rule = compositeRule(breaks);
  const weights = new Float64Array(rule.nodes.length);
  let total = 0;
  rule.nodes.forEach((x, i) => {
    const weight = (rule.weights[i] as number) * betaDist.pdf(x, params.alpha, params.beta);
    weights[i] = weight;
    total += weight;
  });
  // Normalising absorbs the truncated tails and the rule's tiny error in the total mass.
  for (let i = 0; i < weights.length; i += 1) weights[i] = (weights[i] as number) / total;
  return { values: rule.nodes, weights };
}

/** A CDF and its density at one point. */
type CdfWithDensity = (x: number) => { cdf: number; density: number };

/**
 * Safeguarded Newton (Newton inside a shrinking bisection bracket) for F(x) = p, with F
 * increasing on [lower, upper] and F(lower) <= p <= F(upper).
 */
function invert(distribution: CdfWithDensity, p: number, lower: number, upper: number, start: number): number {
  let low = lower;
  let high = upper;
  let x = Math.min(high, Math.max(low, start));
  for (let step = 0; step < 200; step += 1) {
    const { cdf, density } = distribution(x);
    if (cdf < p) low = x;
    else high = x;
    const newton = density > 0 ? x - (cdf - p) / density : Number.NaN;
    const next = newton > low && newton < high ? newton : 0.5 * (low + high);
    if (Math.abs(next - x) <= 1e-14 * Math.max(1, Math.abs(x)) || high - low <= 1e-15 * Math.max(1, Math.abs(x))) return next;
    x = next;
  }
  return x;
}

/** The 2.5% and 97.5% quantiles of a distribution given by its CDF and density. */
function interval95(distribution: CdfWithDensity, lower: number, upper: number, mean: number, sd: number): Interval {
  return [invert(distribution, 0.025, lower, upper, mean - Z_975 * sd), invert(distribution, 0.975, lower, upper, mean + Z_975 * sd)];
}

function betaMean({ alpha, beta }: BetaParams): number {
  return alpha / (alpha + beta);
}

/**
 * CDF and density of T - C. The outer integral runs over the narrower posterior, so that the
 * inner CDF is smooth at the spacing of the nodes.
 */
function differenceDistribution(control: BetaParams, treatment: BetaParams): CdfWithDensity {
  const overControl = betaVariance(control) <= betaVariance(treatment);
  const outer = outerNodes(overControl ? control : treatment);
  const inner = overControl ? treatment : control;
  return (d) => {
    let cdf = 0;
    let density = 0;
    for (let i = 0; i < outer.values.length; i += 1) {
      const x = outer.values[i] as number;
      const w = outer.weights[i] as number;
      // Over C: P(T <= x + d). Over T: P(C >= x - d).
      const at = overControl ? x + d : x - d;
      const innerCdf = betaDist.cdf(at, inner.alpha, inner.beta);
      cdf += w * (overControl ? innerCdf : 1 - innerCdf);
      density += w * betaDist.pdf(at, inner.alpha, inner.beta);
    }
    return { cdf, density };
  };
}

/** CDF and density of T / C on (0, infinity), integrated over the narrower posterior as above. */
function ratioDistribution(control: BetaParams, treatment: BetaParams): CdfWithDensity {
  const overControl = betaVariance(control) <= betaVariance(treatment);
  const outer = outerNodes(overControl ? control : treatment);
  const inner = overControl ? treatment : control;
  return (r) => {
    let cdf = 0;
    let density = 0;
    for (let i = 0; i < outer.values.length; i += 1) {
      const x = outer.values[i] as number;
      const w = outer.weights[i] as number;
      // Over C: P(T <= r x), density x f_T(r x). Over T: P(C >= x / r), density f_C(x / r) x / r^2.
      const at = overControl ? r * x : x / r;
      const innerCdf = betaDist.cdf(at, inner.alpha, inner.beta);
      cdf += w * (overControl ? innerCdf : 1 - innerCdf);
      density += w * betaDist.pdf(at, inner.alpha, inner.beta) * (overControl ? x : x / (r * r));
    }
    return { cdf, density };
  };
}

/** P(T > C) exactly when Evan Miller's sum is feasible, else by the same quadrature. */
function probTreatmentAbove(control: BetaParams, treatment: BetaParams): number {
  const exact = probGreaterBeta(control, treatment);
  return exact ?? 1 - differenceDistribution(control, treatment)(0).cdf;
}

/** Effect of treatment T ~ Beta against control C ~ Beta. */
export function binaryEffect(control: BetaParams, treatment: BetaParams, higherIsBetter = true): Effect {
  const meanC = betaMean(control);
  const meanT = betaMean(treatment);
  const sdDifference = Math.sqrt(betaVariance(control) + betaVariance(treatment));
  const absoluteInterval = interval95(differenceDistribution(control, treatment), -1, 1, meanT - meanC, sdDifference);
  const ratioUpper = betaDist.quantile(1 - TAIL, treatment.alpha, treatment.beta) / betaDist.quantile(TAIL, control.alpha, control.beta);
  const ratioSd = (meanT / meanC) * Math.sqrt(betaVariance(control) / meanC ** 2 + betaVariance(treatment) / meanT ** 2);
  const [ratioLow, ratioHigh] = interval95(ratioDistribution(control, treatment), 0, ratioUpper, meanT / meanC, ratioSd);
  const inverseMeanC = control.alpha > 1 ? (control.alpha + control.beta - 1) / (control.alpha - 1) : null;
  const above = probTreatmentAbove(control, treatment);
  return {
    absolute: { mean: meanT - meanC, credible_interval_95: absoluteInterval },
    relative: { mean: inverseMeanC === null ? null : meanT * inverseMeanC - 1, credible_interval_95: [ratioLow - 1, ratioHigh - 1] },
    chance_to_beat_control: higherIsBetter ? above : 1 - above,
  };
}

/**
 * Effect of treatment T ~ N(m_t, v_t) against control C ~ N(m_c, v_c), v the variance of each
 * mean. A zero total variance (both arms constant) makes the difference a point mass.
 */
export function normalEffect(control: NormalParams, treatment: NormalParams, higherIsBetter = true): Effect {
  const difference = treatment.mean - control.mean;
  const sd = Math.sqrt(control.variance + treatment.variance);
  const above = sd === 0 ? (difference > 0 ? 1 : difference < 0 ? 0 : 0.5) : normalDist.cdf(difference / sd, 0, 1);
  let relative: Effect['relative'] = { mean: null, credible_interval_95: null };
  if (control.mean !== 0) {
    const mean = difference / control.mean;
    const variance = treatment.variance / control.mean ** 2 + (control.variance * treatment.mean ** 2) / control.mean ** 4;
    const half = Z_975 * Math.sqrt(variance);
    relative = { mean, credible_interval_95: [mean - half, mean + half] };
  }
  return {
    absolute: { mean: difference, credible_interval_95: [difference - Z_975 * sd, difference + Z_975 * sd] },
    relative,
    chance_to_beat_control: higherIsBetter ? above : 1 - above,
  };
}
