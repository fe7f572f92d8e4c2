/**
 * The words people read for the decision rule's settings, so a reason or warning reads as a
 * product manager would say it ("the minimum sample of 5,000 units per variant") rather than as
 * the API's field names (`min_sample_per_variant`). Machine-readable codes stay in their own fields.
 */
import type { DecisionMethod } from './types.js';

const RULE_NAMES: Record<DecisionMethod, string> = {
  'bayesian.posterior_threshold': 'the Bayesian rule (chance of being best)',
  'bayesian.always_valid_evalue': 'the always-valid Bayesian rule (e-value)',
  'frequentist.sequential_msprt': 'the sequential test (mSPRT)',
};

/** A decision method in words: "the Bayesian rule (chance of being best)". */
export function ruleName(method: DecisionMethod): string {
  return RULE_NAMES[method];
}

/**
 * A probability as a percentage with steady precision: 0.9992 -> "99.92%", 0.95 -> "95%"; never
 * "100%" or "0%" for something short of certain ("over 99.99%", "under 0.01%").
 */
export function chanceText(probability: number): string {
  if (probability > 0.9999 && probability < 1) return 'over 99.99%';
  if (probability < 0.0001 && probability > 0) return 'under 0.01%';
  const percent = 100 * probability;
  const digits = Number.isInteger(Math.round(percent * 100) / 100) ? 0 : 2;
  return `${percent.toFixed(digits)}%`;
}

/** A whole count with thousands separators: 20000 -> "20,000". */
export function unitsText(units: number): string {
  return units.toLocaleString('en-US');
}

/** Elapsed days as a person says them: 3.4 -> "3.4 days", 1 -> "1 day". */
export function daysText(days: number): string {
  const rounded = Math.round(days * 10) / 10;
  return `${rounded} ${rounded === 1 ? 'day' : 'days'}`;
}

/** A p-value as people read it: "p < 0.0001" when tiny, else two significant digits ("p = 0.0023"). */
export function pValueText(p: number): string {
  if (p < 0.0001) return 'p < 0.0001';
  return `p = ${Number(p.toPrecision(2))}`;
}
