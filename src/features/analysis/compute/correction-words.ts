/**
 * What the recommendation reads from the multiple-testing correction (docs/statistics.md
 * "Multiple testing"): the winner's adjusted p-value on the primary metric, and whether the
 * correction is what keeps it from clearing the bar the decision rule's threshold stands for,
 * 2·(1 − posterior_threshold) on the two-sided p-value 2·min(c, 1 − c) (0.01 at the default 0.995,
 * 0.10 at 0.95: a winner of two variants has c at or above the threshold).
 */
import { DEFAULT_DECISION_RULE } from '../../../stats/index.js';
import type { MultipleTestingReport } from '../schemas.js';

const METHOD_NAMES = { holm: 'Holm', benjamini_hochberg: 'Benjamini-Hochberg' } as const;

export interface CorrectionReading {
  adjusted: number;
  bar: number;
  /** The raw p-value clears the bar and the adjusted one does not. */
  blocks: boolean;
  method: keyof typeof METHOD_NAMES;
  family: number;
  scope: MultipleTestingReport['scope'];
}

interface Readable {
  per_variant: ReadonlyArray<{ variant_key: string; effect: { p_value?: number | undefined; adjusted_p_value?: number | null | undefined } | null }>;
  multiple_testing?: MultipleTestingReport | null | undefined;
}

/** The correction of the winner's primary p-value, or null when nothing was adjusted (no family of two or more, method none, older snapshots). */
export function correctionOf(input: Readable, winner: string, threshold: number | undefined): CorrectionReading | null {
  const report = input.multiple_testing;
  if (!report || report.method === 'none' || report.family_size < 2) return null;
  const effect = input.per_variant.find((variant) => variant.variant_key === winner)?.effect;
  const raw = effect?.p_value;
  const adjusted = effect?.adjusted_p_value;
  if (raw === undefined || adjusted === undefined || adjusted === null) return null;
  const bar = 2 * (1 - (threshold ?? DEFAULT_DECISION_RULE.posterior_threshold));
  return { adjusted, bar, blocks: raw <= bar && adjusted > bar, method: report.method, family: report.family_size, scope: report.scope };
}

/** "its p-value adjusted for the 4 comparisons of the goals (Benjamini-Hochberg) is 0.031". */
export function correctionText(reading: CorrectionReading): string {
  const family = reading.scope === 'goals' ? 'the goals' : 'the goals and guardrails';
  return `its p-value adjusted for the ${reading.family} comparisons of ${family} read together (${METHOD_NAMES[reading.method]}) is ${reading.adjusted < 0.0001 ? 'below 0.0001' : String(Number(reading.adjusted.toPrecision(2)))}`;
}
