/**
 * From per-slice totals to the snapshot's `breakdowns` (docs/analysis.md "Breakdowns by dimension").
 * Pure: the same totals always give the same breakdowns.
 *
 * - Each slice (a dimension value, `(other)` or `(none)`) is analysed like the whole experiment:
 *   the primary metric's per-variant posteriors with the effect against the control, and its own
 *   sample-ratio mismatch test against the experiment's weights, or a bandit's period-weighted
 *   split (so a broken exposure log in one slice shows in that slice).
 * - `significant_after_correction`: Holm's procedure at 5% over every (slice, non-control
 *   variant) of the snapshot, on p = 2·min(c, 1 − c) with c the chance to beat control. Dozens of
 *   slices tested at 5% each would show a "significant" slice in most A/A tests; Holm keeps the
 *   chance of any false one at 5%.
 */
import { sampleRatioMismatch } from '../../../stats/index.js';
import { holmRejections, twoSidedTail } from '../../../stats/holm.js';
import type { MetricRow } from '../../metrics/read.js';
import type { Variant } from '../../experiments/schemas.js';
import { analyzeMetric, sampleSizesOnly } from './build.js';
import type { Breakdown, BreakdownValue } from '../schemas.js';
import { type BreakdownTotals, NONE_BUCKET, OTHER_BUCKET, type VariantTotals } from '../store/contract.js';

export const OTHER_LABEL = '(other)';
export const NONE_LABEL = '(none)';

export interface BreakdownBuildInput {
  /** Every variant with its weight (SRM), in the experiment's order. */
  variants: readonly Variant[];
  /** The variants the experiment-level analysis compares (per_variant lists these). */
  analysed: readonly Variant[];
  primary: MetricRow | null;
  breakdowns: readonly BreakdownTotals[];
  /**
   * What each slice's split is tested against, one per variant, proportional: a bandit's split
   * under its period weights (bandit-analysis.ts, the same as its overall check). Absent: the
   * variants' weights.
   */
  srmWeights?: readonly number[] | null;
}

type Slice = Omit<BreakdownValue, 'significant_after_correction'>;

function sliceOf(input: BreakdownBuildInput, value: string, totals: ReadonlyMap<string, VariantTotals>): Slice {
  const unitsOf = (key: string) => totals.get(key)?.units ?? 0;
  const srm = sampleRatioMismatch(
    input.variants.map((variant) => unitsOf(variant.key)),
    input.srmWeights ?? input.variants.map((variant) => variant.weight),
  );
  // A quantile primary's slices report their units only: the quantile is taken over all the values, not from the slices' sums.
  const analysed = input.primary && input.primary.kind !== 'quantile';
  const perVariant = analysed ? analyzeMetric(input.primary as MetricRow, 0, input.analysed, totals, null).posteriors : sampleSizesOnly(input.analysed, totals);
  return {
    value,
    label: value,
    units: input.variants.reduce((sum, variant) => sum + unitsOf(variant.key), 0),
    per_variant: perVariant,
    srm_chi_squared_p: srm.pValue,
    srm_warning: srm.warning,
  };
}

/** The slices of one breakdown: its top values in order, then (other) and (none) when they have units. */
async function slicesOf(input: BreakdownBuildInput, breakdown: BreakdownTotals): Promise<Slice[]> {
  const labelled: Array<[number, string]> = [
    ...breakdown.values.map((value, index): [number, string] => [index, value]),
    [OTHER_BUCKET, OTHER_LABEL],
    [NONE_BUCKET, NONE_LABEL],
  ];
  const slices: Slice[] = [];
  for (const [bucket, label] of labelled) {
    const totals = breakdown.buckets.get(bucket);
    if (!totals || totals.size === 0) continue;
    // A slice's statistics take milliseconds (exact Beta sums, interval roots) and a snapshot has
    // dozens of slices; run inline on the API's thread (VERDICT_ANALYSIS_THREADS=0), requests get
    // the thread between them. On the statistics thread the pause costs nothing.
    await new Promise((resolve) => setImmediate(resolve));
    slices.push(sliceOf(input, label, totals));
  }
  return slices;
}

/** The tails 2·min(c, 1 − c) of a slice's non-control variants (null where no effect is defined). */
function tailsOf(slice: Slice): Array<number | null> {
  return slice.per_variant
    .filter((variant) => !variant.is_control)
    .map((variant) => (variant.effect ? twoSidedTail(variant.effect.chance_to_beat_control) : null));
}

/**
 * Marks each slice significant when Holm, over all the snapshot's slices and variants together,
 * rejects any of its variants' tails.
 */
export function markSignificant(slices: readonly Slice[]): boolean[] {
  const tails = slices.map(tailsOf);
  const rejected = holmRejections(tails.flat());
  let offset = 0;
  return tails.map((list) => {
    const any = rejected.slice(offset, offset + list.length).some(Boolean);
    offset += list.length;
    return any;
  });
}

export async function buildBreakdowns(input: BreakdownBuildInput): Promise<Breakdown[]> {
  const perBreakdown: Slice[][] = [];
  for (const breakdown of input.breakdowns) perBreakdown.push(await slicesOf(input, breakdown));
  const significant = markSignificant(perBreakdown.flat());
  let index = 0;
  return input.breakdowns.map((breakdown, i) => ({
    dimension: breakdown.key.name,
    values: (perBreakdown[i] ?? []).map((slice) => ({ ...slice, significant_after_correction: significant[index++] ?? false })),
  }));
}
