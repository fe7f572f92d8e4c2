/**
 * Always-valid tests of treatment - control, safe under continuous monitoring:
 * - the Gaussian-mixture e-value of Waudby-Smith et al. (2023), "Time-uniform central limit theory
 *   and asymptotic confidence sequences" (as in GrowthBook's sequential tests and confseq's
 *   two-sided normal mixture);
 * - the mixture SPRT of Johari, Pekelis and Walsh (2017), "Always valid inference", with a
 *   N(0, tau^2) mixture.
 * Both reject H0: delta = theta0 when the evidence reaches 1/alpha (Ville's inequality bounds the
 * chance that a nonnegative (super)martingale with mean 1 ever crosses 1/alpha by alpha), and report
 * the always-valid p-value min(1, 1/evidence).
 */
import type { ArmMoments } from './types.js';

export interface DifferenceEstimate {
  /** treatment mean - control mean */
  delta: number;
  /** var_t / n_t + var_c / n_c: the variance of delta (unpooled, per arm). */
  varianceOfDelta: number;
  /** n_c + n_t */
  totalN: number;
}

export interface SequentialTestResult extends DifferenceEstimate {
  /** ln of the e-value (Gaussian mixture) or of the likelihood ratio Lambda (mSPRT). */
  logEvidence: number;
  /** min(1, 1 / evidence) at this look; take the running minimum across looks. */
  pValue: number;
  /** Half-width of the always-valid (1 - alpha) confidence sequence for delta; Infinity if undefined. */
  halfWidth: number;
  rejectsNull: boolean;
}

export interface GaussianMixtureOptions {
  alpha: number;
  /** N*: the total sample size (both arms) at which the boundary is tightest. */
  tuningSampleSize: number;
  nullDifference?: number;
}

export interface MsprtOptions {
  alpha: number;
  /** tau^2 of the N(0, tau^2) mixture, on the scale of the difference. */
  mixingVariance: number;
  nullDifference?: number;
}

function assertAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 1)) {
    throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  }
}

export function differenceEstimate(control: ArmMoments, treatment: ArmMoments): DifferenceEstimate {
  const varianceOfDelta = control.n > 0 && treatment.n > 0 ? treatment.variance / treatment.n + control.variance / control.n : Infinity;
  return { delta: treatment.mean - control.mean, varianceOfDelta, totalN: control.n + treatment.n };
}

/**
 * Fewer units than this in an arm, and a look carries no evidence (the usual n >= 30 rule of thumb
 * for a CLT-based test). Skipping looks cannot hurt an always-valid guarantee.
 */
export const MIN_UNITS_PER_ARM = 30;

/**
 * Whether the plug-in variance can carry evidence: both arms have MIN_UNITS_PER_ARM units and a
 * positive per-unit variance. Why per arm: an arm whose values are all equal so far (0 conversions)
 * has a plug-in variance of 0, which makes its mean look certain; next to a large arm that turns
 * sampling noise into overwhelming "evidence".
 */
function hasUsableVariance(control: ArmMoments, treatment: ArmMoments): boolean {
  return (
    control.n >= MIN_UNITS_PER_ARM &&
    treatment.n >= MIN_UNITS_PER_ARM &&
    control.variance > 0 &&
    treatment.variance > 0 &&
    Number.isFinite(control.variance) &&
    Number.isFinite(treatment.variance)
  );
}

function noEvidence(estimate: DifferenceEstimate): SequentialTestResult {
  return { ...estimate, logEvidence: 0, pValue: 1, halfWidth: Infinity, rejectsNull: false };
}

/**
 * Waudby-Smith et al.'s mixing parameter: rho^2 = (-2 ln alpha + ln(-2 ln alpha + 1)) / N*, which
 * makes the boundary tightest at N = N*. confseq's `best_rho(v, alpha)` is 1 / rho^2 with v = N*.
 */
export function gaussianMixtureRhoSquared(alpha: number, tuningSampleSize: number): number {
  assertAlpha(alpha);
  if (!(tuningSampleSize > 0)) {
    throw new RangeError(`tuningSampleSize must be positive, got ${tuningSampleSize}`);
  }
  const twiceLogInverseAlpha = -2 * Math.log(alpha);
  return (twiceLogInverseAlpha + Math.log(twiceLogInverseAlpha + 1)) / tuningSampleSize;
}

/**
 * ln of the two-sided normal-mixture martingale at standardized sum S and intrinsic time t:
 * ln E = rho^2 S^2 / (2 (t rho^2 + 1)) - ln(t rho^2 + 1) / 2, i.e. the integral of
 * exp(lambda S - lambda^2 t / 2) over lambda ~ N(0, rho^2). Equals confseq `log_superMG(s, v)`.
 */
export function normalMixtureLogEValue(standardizedSum: number, time: number, rhoSquared: number): number {
  const scaledTime = time * rhoSquared;
  return (rhoSquared * standardizedSum * standardizedSum) / (2 * (scaledTime + 1)) - 0.5 * Math.log1p(scaledTime);
}

/**
 * |S| at which the e-value reaches 1/alpha: sqrt(2 (t rho^2 + 1) / rho^2 (ln(1/alpha) + ln(t rho^2 + 1) / 2)),
 * the inverse of normalMixtureLogEValue. Equals confseq `bound(v, ln(1/alpha))`.
 */
export function normalMixtureBoundary(time: number, rhoSquared: number, alpha: number): number {
  assertAlpha(alpha);
  const scaledTime = time * rhoSquared;
  return Math.sqrt(((2 * (scaledTime + 1)) / rhoSquared) * (-Math.log(alpha) + 0.5 * Math.log1p(scaledTime)));
}

/**
 * Gaussian-mixture e-value of treatment vs control (docs/statistics.md "Gaussian-mixture e-value"): with N = n_c + n_t and
 * st^2 = (delta - theta0)^2 N / se^2 (se^2 = varianceOfDelta), e = exp(rho^2 st^2 / (2 (N rho^2 + 1)))
 * / sqrt(N rho^2 + 1). st is the standardized sum S of N observations whose per-observation variance
 * is se^2 N, so the confidence-sequence half-width on delta is boundary(N) se / sqrt(N).
 * The guarantee is asymptotic (CLT with a plug-in variance), as in the paper.
 */
export function gaussianMixtureTest(control: ArmMoments, treatment: ArmMoments, options: GaussianMixtureOptions): SequentialTestResult {
  const estimate = differenceEstimate(control, treatment);
  const rhoSquared = gaussianMixtureRhoSquared(options.alpha, options.tuningSampleSize);
  if (!hasUsableVariance(control, treatment)) {
    return noEvidence(estimate);
  }
  const se = Math.sqrt(estimate.varianceOfDelta);
  const standardizedSum = (Math.sqrt(estimate.totalN) * (estimate.delta - (options.nullDifference ?? 0))) / se;
  const logEvidence = normalMixtureLogEValue(standardizedSum, estimate.totalN, rhoSquared);
  const halfWidth = (normalMixtureBoundary(estimate.totalN, rhoSquared, options.alpha) * se) / Math.sqrt(estimate.totalN);
  return {
    ...estimate,
    logEvidence,
    pValue: Math.min(1, Math.exp(-logEvidence)),
    halfWidth,
    rejectsNull: logEvidence >= -Math.log(options.alpha),
  };
}

/**
 * mSPRT mixing variance from the minimum detectable effect. The MDE is relative to the control
 * mean, so on the difference scale it is mde |controlMean|, and tau^2 = (mde |controlMean|)^2.
 * Why: with V the variance of delta, ln Lambda = -ln(1 + tau^2 / V) / 2 + z^2 tau^2 / (2 (V + tau^2))
 * where z^2 = delta^2 / V. Setting its derivative in tau^2 to zero gives tau^2 = delta^2 - V, so for
 * data that show exactly the MDE the evidence is largest at tau^2 = MDE^2 - V, which tends to MDE^2
 * once V is small next to MDE^2 (the regime in which an MDE-sized effect becomes detectable).
 */
export function msprtMixingVariance(minimumDetectableEffect: number, controlMean: number): number {
  const effect = minimumDetectableEffect * Math.abs(controlMean);
  return effect * effect;
}

/**
 * Johari et al.'s normal-mixture likelihood ratio:
 * ln Lambda = ln sqrt(V / (V + tau^2)) + tau^2 (delta - theta0)^2 / (2 V (V + tau^2)).
 */
export function msprtLogLikelihoodRatio(deltaMinusNull: number, varianceOfDelta: number, mixingVariance: number): number {
  const total = varianceOfDelta + mixingVariance;
  return -0.5 * Math.log1p(mixingVariance / varianceOfDelta) + (mixingVariance * deltaMinusNull * deltaMinusNull) / (2 * varianceOfDelta * total);
}

/**
 * mSPRT of treatment vs control. The confidence sequence is every theta0 with Lambda(theta0) < 1/alpha:
 * half-width sqrt(2 V (V + tau^2) / tau^2 (ln(1/alpha) + ln((V + tau^2) / V) / 2)).
 * A zero mixing variance (e.g. a control mean of 0) is a point mixture at the null: no evidence.
 */
export function msprtTest(control: ArmMoments, treatment: ArmMoments, options: MsprtOptions): SequentialTestResult {
  assertAlpha(options.alpha);
  const estimate = differenceEstimate(control, treatment);
  const tauSquared = options.mixingVariance;
  if (!hasUsableVariance(control, treatment) || !(tauSquared > 0)) {
    return noEvidence(estimate);
  }
  const variance = estimate.varianceOfDelta;
  const deltaMinusNull = estimate.delta - (options.nullDifference ?? 0);
  const logEvidence = msprtLogLikelihoodRatio(deltaMinusNull, variance, tauSquared);
  const logThreshold = -Math.log(options.alpha) + 0.5 * Math.log1p(tauSquared / variance);
  const halfWidth = Math.sqrt(((2 * variance * (variance + tauSquared)) / tauSquared) * logThreshold);
  return {
    ...estimate,
    logEvidence,
    pValue: Math.min(1, Math.exp(-logEvidence)),
    halfWidth,
    rejectsNull: logEvidence >= -Math.log(options.alpha),
  };
}

/** Always-valid p-value across looks: the running minimum (Johari et al., section 3). */
export function runningMinimumPValue(previous: number | null | undefined, current: number): number {
  return previous === null || previous === undefined ? current : Math.min(previous, current);
}
