/**
 * How an experiment splits its traffic (docs/experiments.md "Bandits", decisions §17): the fixed
 * weights of its variants, or a bandit that moves them by Thompson sampling. A bandit's weight
 * changes are kept as periods, which its analysis stratifies by.
 */
import Type, { type Static } from 'typebox';
import type { FieldError } from '../../http/problems.js';
import { Timestamp } from '../../http/schemas.js';

/** decisions §17's defaults and bounds. */
export const BANDIT_DEFAULTS = {
  burn_in_hours: 24,
  update_every_minutes: 60,
  min_units_per_variant: 100,
  weight_floor: 0.01,
  stop_at_prob_best: 0.95,
} as const;
export const MIN_UPDATE_EVERY_MINUTES = 15;
/** Past a billion units per variant a bandit would never update: a typo, refused rather than stored. */
export const MAX_MIN_UNITS_PER_VARIANT = 1_000_000_000;

const banditFields = {
  burn_in_hours: Type.Number({ minimum: 0, maximum: 8760, description: 'hours at the starting weights before the first update (default 24)' }),
  update_every_minutes: Type.Integer({
    minimum: MIN_UPDATE_EVERY_MINUTES,
    maximum: 10080,
    description: 'minutes between weight updates (default 60, at least 15)',
  }),
  min_units_per_variant: Type.Integer({
    minimum: 1,
    maximum: MAX_MIN_UNITS_PER_VARIANT,
    description: 'no update until every variant has this many exposed units (default 100, at most 1000000000)',
  }),
  weight_floor: Type.Number({
    minimum: 0,
    exclusiveMaximum: 1,
    description: 'each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01)',
  }),
  stop_at_prob_best: Type.Number({
    minimum: 0.5,
    maximum: 0.9999,
    description: 'the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one)',
  }),
};

export const AllocationInput = Type.Union(
  [
    Type.Object({ type: Type.Literal('fixed') }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('bandit'),
        burn_in_hours: Type.Optional(banditFields.burn_in_hours),
        update_every_minutes: Type.Optional(banditFields.update_every_minutes),
        min_units_per_variant: Type.Optional(banditFields.min_units_per_variant),
        weight_floor: Type.Optional(banditFields.weight_floor),
        stop_at_prob_best: Type.Optional(banditFields.stop_at_prob_best),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional' },
);
export type AllocationInput = Static<typeof AllocationInput>;

export const AllocationSchema = Type.Union([Type.Object({ type: Type.Literal('fixed') }), Type.Object({ type: Type.Literal('bandit'), ...banditFields })], {
  description: 'how traffic is split: fixed weights, or a bandit with every setting filled in',
});
export type Allocation = Static<typeof AllocationSchema>;
export type BanditAllocation = Extract<Allocation, { type: 'bandit' }>;

export const AllocationPeriodSchema = Type.Object({
  started_at: Timestamp,
  weights: Type.Record(Type.String(), Type.Integer(), { description: 'variant key -> percent of new units during the period' }),
  seed: Type.Union([Type.Integer(), Type.Null()], { description: 'the seed of the Thompson draws that set these weights; null for the starting weights' }),
});
export type AllocationPeriod = Static<typeof AllocationPeriodSchema>;
export const AllocationPeriods = Type.Array(AllocationPeriodSchema, {
  description: 'a bandit’s weight splits, oldest first, from its start; empty for a fixed allocation or a bandit not started',
});

export const FIXED: Allocation = { type: 'fixed' };

/** The stored form: a bandit's defaults filled in. */
export function normalizeAllocation(input: AllocationInput | undefined | null): Allocation {
  if (!input || input.type === 'fixed') return FIXED;
  return { ...BANDIT_DEFAULTS, ...input, type: 'bandit' };
}

export function parseAllocation(stored: string | null): Allocation {
  return stored === null ? FIXED : normalizeAllocation(JSON.parse(stored) as AllocationInput);
}

/** The periods in their stored form (started_at in epoch ms). */
export interface StoredPeriod {
  started_at: number;
  weights: Record<string, number>;
  seed: number | null;
}

export function parsePeriods(stored: string | null): StoredPeriod[] {
  return stored === null ? [] : (JSON.parse(stored) as StoredPeriod[]);
}

/** 0.333… -> "33.33%", 0.6 -> "60%". */
function percentText(fraction: number): string {
  return `${Number((fraction * 100).toFixed(2))}%`;
}

/**
 * Rules the schema cannot express, on the experiment as it would be after the change: a bandit
 * needs a primary metric (it reweights on it), and its floor must leave room for P(best):
 * K·floor < 1.
 */
export function allocationErrors(allocation: Allocation, variantCount: number, primaryMetricId: string | null | undefined): FieldError[] {
  if (allocation.type !== 'bandit') return [];
  const errors: FieldError[] = [];
  if (!primaryMetricId) errors.push({ pointer: '/primary_metric_id', message: 'a bandit needs a primary metric: it moves traffic by P(best) on it' });
  if (variantCount * allocation.weight_floor >= 1) {
    errors.push({
      pointer: '/allocation/weight_floor',
      // In fractions for the API and in percent for the admin UI, whose field takes percent.
      message: `weight_floor must be below 1/K = ${(1 / variantCount).toFixed(4)} (${percentText(1 / variantCount)}) for ${variantCount} variants, got ${allocation.weight_floor} (${percentText(allocation.weight_floor)})`,
    });
  }
  return errors;
}

/**
 * A bandit not yet started must give each variant at least its floor's share from the start, or
 * it would begin on a split its own rule forbids (100/0 with a floor of 0.1). Once running, the
 * bandit sets the weights itself.
 */
export function startingWeightErrors(allocation: Allocation, variants: ReadonlyArray<{ weight: number }>): FieldError[] {
  if (allocation.type !== 'bandit' || variants.length * allocation.weight_floor >= 1) return [];
  const floor = allocation.weight_floor;
  // Weights are percents: compared as shares, so that a weight of 7 meets a floor of 0.07 exactly.
  return variants.flatMap(({ weight }, index) =>
    weight / 100 < floor
      ? [
          {
            pointer: `/variants/${index}/weight`,
            message: `a bandit keeps every variant at or above its weight_floor (${floor}); a starting weight of ${weight}% is below it`,
          },
        ]
      : [],
  );
}
