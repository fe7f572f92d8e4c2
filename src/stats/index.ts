/**
 * Public API of Verdict's statistics library: pure functions, no I/O. See docs/statistics.md for
 * the models, formulas, reference numbers and the seeding of the Monte Carlo.
 */
export type {
  ArmMoments,
  BetaParams,
  Comparison,
  Decision,
  DecisionMethod,
  DecisionRuleSettings,
  DecisionVariant,
  Interval,
  MonteCarloOptions,
  NormalParams,
  VariantAnalysis,
  Verdict,
} from './types.js';

export { JEFFREYS_PRIOR, MAX_EXACT_TERMS, UNIFORM_PRIOR, betaPosterior, betaVariance, expectedLossBeta, probGreaterBeta } from './beta.js';
export type { BetaPosterior } from './beta.js';

export {
  Z_975,
  bernoulliMoments,
  expectedLossNormal,
  expectedPositivePart,
  momentsFromSums,
  normalMeanPosterior,
  normalRisk,
  probGreaterNormal,
} from './normal.js';
export type { NormalMeanPosterior, SufficientStats } from './normal.js';

export { DEFAULT_DRAWS, DEFAULT_SEED, monteCarloBeta, monteCarloNormal } from './montecarlo.js';
export type { MonteCarloEstimate } from './montecarlo.js';

export { compareBetaPosteriors, compareNormalPosteriors } from './compare.js';

export { SRM_WARNING_P, sampleRatioMismatch } from './srm.js';
export type { SrmResult } from './srm.js';

export {
  MIN_UNITS_PER_ARM,
  differenceEstimate,
  gaussianMixtureRhoSquared,
  gaussianMixtureTest,
  msprtLogLikelihoodRatio,
  msprtMixingVariance,
  msprtTest,
  normalMixtureBoundary,
  normalMixtureLogEValue,
  runningMinimumPValue,
} from './sequential.js';
export type { DifferenceEstimate, GaussianMixtureOptions, MsprtOptions, SequentialTestResult } from './sequential.js';

export { DEFAULT_DECISION_RULE, binaryDecisionVariant, decide, resolveDecisionRule, sequentialEvidence } from './decision.js';
export type { DecisionInput, TreatmentEvidence } from './decision.js';

export { analyzeBinaryMetric, analyzeNormalArms, analyzeNumericMetric } from './analyze.js';
export type { AnalysisOptions, BinaryArmCounts, NormalArm, NumericArmSums } from './analyze.js';

export { binaryEffect, normalEffect } from './effect.js';
export type { Effect } from './effect.js';

export { ratioPosterior } from './ratio.js';
export type { RatioSums } from './ratio.js';

export { cupedAdjust, cupedTheta } from './cuped.js';
export type { CupedArm, CupedResult, CupedSums } from './cuped.js';

export { banditExpectedUnits, banditUpdate, flooredWeights, stratifiedEstimates, thompsonProbBest, toIntegerPercentages } from './bandit.js';
export type { BanditUpdate, StratifiedEstimate, ThompsonOptions } from './bandit.js';

export { chanceText, daysText, pValueText, ruleName, unitsText } from './rule-words.js';

export { FAMILY_ALPHA, MULTIPLE_TESTING_METHODS, adjustPValues, bonferroniInterval, bonferroniZ, familySize } from './multiple-testing.js';
export type { MultipleTestingMethod } from './multiple-testing.js';

export { clusteredSigma, quantileEstimate, sampleQuantile } from './quantile.js';
export type { QuantileEstimate, QuantileSample } from './quantile.js';
