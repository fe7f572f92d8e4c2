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
  /** Seeds the comparison sample's hash (first contacts are recorded only when it is known). */
  sampleSalt?: string;
}

const BUCKETS = 10_000;

/** The number of buckets (of 10,000) a percentage holds out: 0.5% -> 50, 20% -> 2000. */
export function heldOutBuckets(percent: number): number {
  return Math.round(percent * 100);
}

/**
 * The buckets (of 10,000, under the sample's salt) that draw the comparison sample from the units
 * not held out: h / (1 - h) of them, so the sample is as large as the holdout in expectation
 * (Statsig's equal-size comparison). 20% -> 2,500 buckets of the other 80%: 20% of all units.
 */
export function sampleBuckets(percent: number): number {
  const held = heldOutBuckets(percent);
  return Math.min(BUCKETS, Math.round((held * BUCKETS) / (BUCKETS - held)));
}

/** The share of all units each group is expected to hold: what the holdout's SRM check compares with. */
export function expectedShares(percent: number): { held_out: number; sample: number } {
  const held = heldOutBuckets(percent) / BUCKETS;
  // Rounded past the float noise of the product: 0.9 × 0.1111 is 0.09999, not 0.09999000000000001.
  return { held_out: held, sample: Number(((1 - held) * (sampleBuckets(percent) / BUCKETS)).toFixed(12)) };
}

/** A unit's two buckets when it is held out or sampled, or null when it is in neither group. */
export function contactBuckets(
  rule: Pick<HoldoutRule, 'salt' | 'percent'> & { sampleSalt: string },
  unitId: string,
): { bucket: number; sampleBucket: number } | null {
  const bucket = hashBucketV2(rule.salt, unitId);
  const sampleBucket = hashBucketV2(rule.sampleSalt, unitId);
  if (bucket < heldOutBuckets(rule.percent) || sampleBucket < sampleBuckets(rule.percent)) return { bucket, sampleBucket };
  return null;
}

export function isHeldOut(rule: Pick<HoldoutRule, 'salt' | 'percent'>, unitId: string): boolean {
  return hashBucketV2(rule.salt, unitId) < heldOutBuckets(rule.percent);
}

/** The first of `rules` that holds the unit out, or null. */
export function holdingOut(rules: readonly HoldoutRule[], unitId: string): HoldoutRule | null {
  for (const rule of rules) if (isHeldOut(rule, unitId)) return rule;
  return null;
}
