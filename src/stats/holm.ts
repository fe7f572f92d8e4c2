/**
 * Holm's step-down procedure (Holm 1979): controls the family-wise error rate (the chance of any
 * false rejection) at alpha under any dependence between the tests, and rejects at least what
 * Bonferroni rejects. Sort the m p-values ascending; reject p_(k) while p_(k) <= alpha / (m - k)
 * (k = 0-based rank), and stop at the first that fails.
 */

export const HOLM_ALPHA = 0.05;

/** For each p-value (in the given order), whether Holm rejects it at `alpha`; null p-values are never rejected and not counted. */
export function holmRejections(pValues: readonly (number | null)[], alpha: number = HOLM_ALPHA): boolean[] {
  const tested = pValues.flatMap((p, index) => (p === null || !Number.isFinite(p) ? [] : [{ p, index }])).sort((a, b) => a.p - b.p);
  const rejected = pValues.map(() => false);
  const m = tested.length;
  for (const [rank, test] of tested.entries()) {
    if (test.p > alpha / (m - rank)) break;
    rejected[test.index] = true;
  }
  return rejected;
}

/**
 * The two-sided tail of a chance to beat control c: 2 min(c, 1 - c). Under no effect c is about
 * uniform on [0, 1], so this is about a two-sided p-value.
 */
export function twoSidedTail(chanceToBeatControl: number): number {
  return Math.min(1, 2 * Math.min(chanceToBeatControl, 1 - chanceToBeatControl));
}
