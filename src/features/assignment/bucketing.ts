import { BUCKET_COUNT, hashBucketV2 } from './hashing.js';

/** The only fields bucketing looks at; callers may pass richer variant objects. */
export interface WeightedVariant {
  readonly key: string;
  /** Integer percentage 0..100; the weights of one experiment sum to exactly 100. */
  readonly weight: number;
}

/** One percentage point of weight covers this many of the 10,000 buckets. */
const BUCKETS_PER_PERCENT = BUCKET_COUNT / 100;

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
 * Index of the variant whose half-open range [100 * W(i-1), 100 * W(i)) contains the bucket,
 * where W(i) is the cumulative weight of variants 0..i in list order.
 *
 * Integer arithmetic on purpose: GrowthBook accumulates float weights (0.07 + 0.13 + ...) and
 * for some splits that lands one bucket on the other side of a boundary. Integers make the rule
 * exact in every language. A zero-weight variant has an empty range and is never chosen.
 */
export function variantIndexForBucket(bucket: number, weights: readonly number[]): number {
  let cumulativeEnd = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulativeEnd += (weights[i] ?? 0) * BUCKETS_PER_PERCENT;
    if (bucket < cumulativeEnd) {
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
export function chooseVariant<V extends WeightedVariant>(
  experimentKey: string,
  unitId: string,
  variants: readonly V[],
): V {
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
