/**
 * A holdout's analysis from its group totals (docs/statistics.md "The holdout estimate"): each
 * metric analysed as an experiment's with two variants, the held-out units as the control and the
 * sample as the treatment, so the sample's effect is the cumulative lift of what launched; the
 * same posteriors, intervals, CUPED and correction over the metrics, and an SRM check of the two
 * groups against their expected shares. Pure: the same totals give the same document.
 */
import { sampleRatioMismatch } from '../../../stats/index.js';
import { analyzeMetric, reportedCap } from '../../analysis/compute/build.js';
import { applyCorrection } from '../../analysis/compute/multiple-testing.js';
import type { VariantPosterior } from '../../analysis/schemas.js';
import type { VariantTotals } from '../../analysis/store/contract.js';
import type { Variant } from '../../experiments/schemas.js';
import type { MetricRow } from '../../metrics/read.js';
import type { HoldoutSnapshot } from './schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export const HELD_OUT = 'held_out';
export const SAMPLE = 'sample';

export interface HoldoutAnalysisInput {
  metrics: readonly MetricRow[];
  /** The cap each metric's values were held to, in order. */
  caps: readonly (number | null)[];
  totals: ReadonlyMap<string, VariantTotals>;
  shares: { held_out: number; sample: number };
  /** The CUPED lookback in days, or null when off. */
  cupedLookbackDays: number | null;
}

type Analysed = Pick<HoldoutSnapshot, 'groups' | 'srm_chi_squared_p' | 'srm_warning' | 'metrics' | 'multiple_testing'>;

/** The two arms as variants; weights only name the variants here (the SRM check reads the shares). */
const GROUPS: Variant[] = [
  { id: HELD_OUT, key: HELD_OUT, weight: 1, is_control: true },
  { id: SAMPLE, key: SAMPLE, weight: 1, is_control: false },
];

export function analyseHoldout(input: HoldoutAnalysisInput): Analysed {
  const cuped = input.cupedLookbackDays === null ? null : { lookback_days: input.cupedLookbackDays };
  const analysed = input.metrics.map((metric, index) => analyzeMetric(metric, index, GROUPS, input.totals, cuped));
  const corrected = applyCorrection({
    goals: analysed.map((item) => item.posteriors),
    guardrails: [],
    settings: { method: 'benjamini_hochberg', scope: 'goals' },
  });
  const units = (key: string) => input.totals.get(key)?.units ?? 0;
  const srm = sampleRatioMismatch([units(HELD_OUT), units(SAMPLE)], [input.shares.held_out, input.shares.sample]);
  return {
    groups: [
      { key: HELD_OUT, units: units(HELD_OUT), expected_share: input.shares.held_out },
      { key: SAMPLE, units: units(SAMPLE), expected_share: input.shares.sample },
    ],
    srm_chi_squared_p: srm.pValue,
    srm_warning: srm.warning,
    metrics: input.metrics.map((metric, index) => {
      const perGroup = corrected.goals[index] as VariantPosterior[];
      return {
        id: metric.id,
        key: metric.key,
        name: metric.name,
        unit: metric.unit,
        kind: metric.kind,
        aggregation: metric.aggregation,
        higher_is_better: metric.higher_is_better === 1,
        window_days: metric.unit_dedup_window_ms / DAY_MS,
        cap_applied: reportedCap(metric, input.caps[index] ?? null),
        cuped: analysed[index]?.cuped ?? null,
        per_group: perGroup,
        cumulative_lift: perGroup.find((group) => group.variant_key === SAMPLE)?.effect ?? null,
      };
    }),
    multiple_testing: corrected.report,
  };
}
