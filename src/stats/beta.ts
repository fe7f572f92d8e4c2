/**
 * Beta posteriors of binary metrics and the closed forms that compare two of them.
 *
 * Sources: docs/statistics.md "Binary metrics" (model and exact quantiles); Evan Miller, "Formulas for
 * Bayesian A/B testing" (P(B > A) as a finite sum); Chris Stucchio, "Easy evaluation of decision
 * rules in Bayesian A/B testing" (expected loss through the same sum).
 */
import betaDist from '@stdlib/stats-base-dists-beta';
import betaln from '@stdlib/math-base-special-betaln';
import type { BetaParams, Interval } from './types.js';

/** Beta(1, 1): the product's uniform prior (docs/statistics.md "Binary metrics"). */
export const UNIFORM_PRIOR: BetaParams = { alpha: 1, beta: 1 };
/** Beta(1/2, 1/2): the Jeffreys prior, used by Spotify Confidence's reference intervals. */
export const JEFFREYS_PRIOR: BetaParams = { alpha: 0.5, beta: 0.5 };

/** Above this many terms the exact sum is considered too slow and callers fall back to Monte Carlo. */
export const MAX_EXACT_TERMS = 2_000_000;
/** The recurrence is re-anchored on a direct betaln evaluation this often, to stop drift. */
const REANCHOR_EVERY = 512;

export interface BetaPosterior extends BetaParams {
  mean: number;
  credibleInterval95: Interval;
}

function assertCounts(conversions: number, units: number): void {
  const valid = Number.isInteger(conversions) && Number.isInteger(units) && conversions >= 0 && conversions <= units;
  if (!valid) {
    throw new RangeError(`need integers 0 <= conversions <= units, got ${conversions}/${units}`);
  }
}

/**
 * Posterior Beta(prior.alpha + conversions, prior.beta + units - conversions) (conjugacy), its
 * mean and the exact equal-tailed 95% interval from the Beta quantile function.
 * Why the prior is a parameter: the product fixes Beta(1, 1), but published reference intervals
 * (Spotify Confidence) use Jeffreys, and testing against them needs the same prior.
 */
export function betaPosterior(conversions: number, units: number, prior: BetaParams = UNIFORM_PRIOR): BetaPosterior {
  assertCounts(conversions, units);
  const alpha = prior.alpha + conversions;
  const beta = prior.beta + units - conversions;
  return {
    alpha,
    beta,
    mean: alpha / (alpha + beta),
    credibleInterval95: [betaDist.quantile(0.025, alpha, beta), betaDist.quantile(0.975, alpha, beta)],
  };
}

/** Variance of Beta(alpha, beta): alpha beta / ((alpha + beta)^2 (alpha + beta + 1)). */
export function betaVariance({ alpha, beta }: BetaParams): number {
  const total = alpha + beta;
  return (alpha * beta) / (total * total * (total + 1));
}

function swapShapes({ alpha, beta }: BetaParams): BetaParams {
  return { alpha: beta, beta: alpha };
}

/** ln of the i-th term of Evan Miller's sum, evaluated directly. */
function logMillerTerm(x: BetaParams, y: BetaParams, i: number): number {
  return betaln(x.alpha + i, x.beta + y.beta) - Math.log(y.beta + i) - betaln(1 + i, y.beta) - betaln(x.alpha, x.beta);
}

/**
 * Evan Miller's closed form: P(Y > X) = sum_{i=0}^{y.alpha-1} exp(lnB(x.alpha + i, x.beta + y.beta)
 * - ln(y.beta + i) - lnB(1 + i, y.beta) - lnB(x.alpha, x.beta)), needing an integer y.alpha.
 * Computed in log space (terms underflow for large counts) with a log-sum-exp accumulator. The ratio
 * of consecutive terms is (x.alpha + i)(y.beta + i) / ((x.alpha + x.beta + y.beta + i)(1 + i)), which
 * replaces three betaln calls per term by one log; a direct evaluation every REANCHOR_EVERY terms
 * keeps rounding from accumulating.
 */
function millerSum(x: BetaParams, y: BetaParams): number {
  const terms = y.alpha;
  const totalShape = x.alpha + x.beta + y.beta;
  let logTerm = logMillerTerm(x, y, 0);
  let runningMax = logTerm;
  let scaledSum = 0;
  for (let i = 0; i < terms; i += 1) {
    if (i > 0) {
      logTerm = i % REANCHOR_EVERY === 0 ? logMillerTerm(x, y, i) : logTerm + Math.log(((x.alpha + i - 1) * (y.beta + i - 1)) / ((totalShape + i - 1) * i));
    }
    if (logTerm > runningMax) {
      scaledSum = scaledSum * Math.exp(runningMax - logTerm);
      runningMax = logTerm;
    }
    scaledSum += Math.exp(logTerm - runningMax);
  }
  return Math.exp(runningMax + Math.log(scaledSum));
}

interface SumForm {
  terms: number;
  evaluate: () => number;
}

/**
 * P(Y > X) for independent X ~ Beta(x), Y ~ Beta(y), exactly, or null when no exact form is
 * feasible. Four equivalent forms exist: the direct sum (y.alpha terms), its complement
 * 1 - P(X > Y) (x.alpha terms), and the same two applied to 1 - X ~ Beta(x.beta, x.alpha) and
 * 1 - Y (x.beta and y.beta terms), since Y > X exactly when 1 - X > 1 - Y. Each needs its term
 * count to be an integer; the cheapest one is used. Null when none has an integer count (e.g. the
 * Jeffreys prior) or all exceed MAX_EXACT_TERMS.
 */
export function probGreaterBeta(x: BetaParams, y: BetaParams): number | null {
  const forms: SumForm[] = [
    { terms: y.alpha, evaluate: () => millerSum(x, y) },
    { terms: x.alpha, evaluate: () => 1 - millerSum(y, x) },
    { terms: x.beta, evaluate: () => millerSum(swapShapes(y), swapShapes(x)) },
    { terms: y.beta, evaluate: () => 1 - millerSum(swapShapes(x), swapShapes(y)) },
  ];
  const feasible = forms.filter((form) => Number.isInteger(form.terms) && form.terms >= 1 && form.terms <= MAX_EXACT_TERMS).sort((a, b) => a.terms - b.terms);
  const cheapest = feasible[0];
  if (cheapest === undefined) {
    return null;
  }
  return Math.min(1, Math.max(0, cheapest.evaluate()));
}

/**
 * Expected loss of choosing X over Y: E[max(Y - X, 0)], exactly, or null when infeasible.
 * Stucchio's identity: E[Y 1{Y > X}] = E[Y] P(Y+ > X) with Y+ ~ Beta(y.alpha + 1, y.beta), because
 * y f(y; a, b) = a / (a + b) f(y; a + 1, b); likewise for X. So
 * E[max(Y - X, 0)] = E[Y] P(Y+ > X) - E[X] P(Y > X+).
 */
export function expectedLossBeta(x: BetaParams, y: BetaParams): number | null {
  const yPlus = { alpha: y.alpha + 1, beta: y.beta };
  const xPlus = { alpha: x.alpha + 1, beta: x.beta };
  const yWinsWeighted = probGreaterBeta(x, yPlus);
  const xLosesWeighted = probGreaterBeta(xPlus, y);
  if (yWinsWeighted === null || xLosesWeighted === null) {
    return null;
  }
  const meanX = x.alpha / (x.alpha + x.beta);
  const meanY = y.alpha / (y.alpha + y.beta);
  return Math.max(0, meanY * yWinsWeighted - meanX * xLosesWeighted);
}
