/**
 * Who a holdout holds out: a pure function of the holdout's salt, its percentage and the unit id,
 * so every process (and every restart) agrees without storing anything per unit.
 *
 * The unit's bucket is GrowthBook's v2 hash of (salt, unit id), an integer in [0, 9999]; the
 * holdout takes the range [0, percent × 100). Growing the percentage only widens the range, so a
 * unit held out stays held out (GrowthBook's bucket ranges); the experiment's own bucketing is
 * seeded by its key, so the two hashes are independent and the held-out units come evenly from
 * every variant.
 */
import { hashBucketV2 } from '../assignment/hashing.js';

/** What assignment needs of a holdout that covers an experiment. */
export interface HoldoutRule {
  id: string;
  salt: string;
  percent: number;
}

/** The number of buckets (of 10,000) a percentage holds out: 0.5% -> 50, 20% -> 2000. */
export function heldOutBuckets(percent: number): number {
  return Math.round(percent * 100);
}

export function isHeldOut(rule: Pick<HoldoutRule, 'salt' | 'percent'>, unitId: string): boolean {
  return hashBucketV2(rule.salt, unitId) < heldOutBuckets(rule.percent);
}

/** The first of `rules` that holds the unit out, or null. */
export function holdingOut(rules: readonly HoldoutRule[], unitId: string): HoldoutRule | null {
  for (const rule of rules) if (isHeldOut(rule, unitId)) return rule;
  return null;
}
