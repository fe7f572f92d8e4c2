import { BUCKET_COUNT, hashBucketV2 } from './hashing.js';

/** The only fields bucketing looks at; callers may pass richer variant objects. */
export interface WeightedVariant {
  readonly key: string;
  /** Integer percentage 0..100; the weights of one experiment sum to exactly 100. */
  readonly weight: number;
}

/**
 * The bucket of a unit in an experiment, an integer in [0, 9999].
 * Seed = experiment key (not id) so an SDK that only knows the key can reproduce it.
 */
export function bucketOf(experimentKey: string, unitId: string): number {
  return hashBucketV2(experimentKey, unitId);
}

/**
 * Throws on weights the service layer should already have rejected: reaching here with bad
 * weights is a bug (500), and silently picking something would corrupt the experiment.
 */
export function assertValidWeights(variants: readonly WeightedVariant[]): void {
  if (variants.length === 0) {
    throw new RangeError('bucketing needs at least one variant');
  }
  let total = 0;
  for (const variant of variants) {
    if (!Number.isInteger(variant.weight) || variant.weight < 0 || variant.weight > 100) {
      throw new RangeError(`variant "${variant.key}" has weight ${variant.weight}; expected an integer 0..100`);
    }
    total += variant.weight;
  }
  if (total !== 100) {
    throw new RangeError(`variant weights sum to ${total}; expected 100`);
  }
}

/**
 * The range [start, end) of each variant as fractions of 1, computed the way GrowthBook's JS SDK
 * does with coverage 1: weight / 100 as a double, added up left to right in floating point.
 * Why floats and not exact integers: a unit that a GrowthBook SDK buckets locally must land where
 * Verdict stores it, and float accumulation moves some boundaries by one bucket
 * (0.2 + 0.2 + 0.2 = 0.6000000000000001, so bucket 6000 stays in the third of five 20% variants).
 * A zero-weight variant gets an empty range.
 */
export function bucketRanges(weights: readonly number[]): [start: number, end: number][] {
  let cumulative = 0;
  return weights.map((percent) => {
    const start = cumulative;
    cumulative = start + percent / 100;
    return [start, cumulative];
  });
}

/**
 * Index of the first variant whose range holds bucket / 10000 (start <= n < end), as GrowthBook's
 * chooseVariation does. With integer weights summing to 100 every bucket 0..9999 falls in one:
 * the float total is within 1e-15 of 1, and the largest n is 0.9999.
 */
export function variantIndexForBucket(bucket: number, weights: readonly number[]): number {
  const n = bucket / BUCKET_COUNT;
  const ranges = bucketRanges(weights);
  for (let i = 0; i < ranges.length; i++) {
    const [start, end] = ranges[i] as [number, number];
    if (n >= start && n < end) {
      return i;
    }
  }
  throw new RangeError(`bucket ${bucket} is outside the weight ranges; weights must sum to 100`);
}

/**
 * Deterministically picks the variant of `unitId` in `experimentKey`.
 * Order of `variants` is part of the rule: reordering variants reassigns units, so callers pass
 * them in their stored (creation) order.
 */
export function chooseVariant<V extends WeightedVariant>(experimentKey: string, unitId: string, variants: readonly V[]): V {
  assertValidWeights(variants);
  const index = variantIndexForBucket(
    bucketOf(experimentKey, unitId),
    variants.map((variant) => variant.weight),
  );
  const chosen = variants[index];
  if (chosen === undefined) {
    throw new RangeError(`no variant at index ${index}`);
  }
  return chosen;
}
