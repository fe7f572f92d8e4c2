import { describe, expect, it } from 'vitest';
import { resolveFromTopValues, topLimit } from './percentile-cap.js';
import type { TopLists, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';

/** Two variants, one metric, built from per-unit values (0 = no value), uncapped sums. */
function totalsOf(values: Record<string, number[]>): Map<string, VariantTotals> {
  return new Map(
    Object.entries(values).map(([key, list]) => [
      key,
      {
        variant_key: key,
        units: list.length,
        metrics: [
          {
            ...EMPTY_TOTALS,
            n: list.length,
            sum: list.reduce((a, b) => a + b, 0),
            sum_of_squares: list.reduce((a, b) => a + b * b, 0),
            nonzero: list.filter((v) => v !== 0).length,
          },
        ],
      },
    ]),
  );
}

/** One statement per list of [variant, value], each returning its `limit` largest values. */
function listsOf(statements: Array<[rows: Array<[string, number]>, limit: number]>): TopLists {
  return {
    statements: statements.map(([rows, limit]) => {
      const sorted = rows.filter(([, value]) => value !== 0).sort((a, b) => b[1] - a[1]);
      return { values: sorted.slice(0, limit).map(([variant_key, value]) => ({ variant_key, value })), truncated: sorted.length >= limit };
    }),
  };
}

describe('resolveFromTopValues', () => {
  const control = [0, 3, 10, 0, 7, 200, 1, 4];
  const treatment = [5, 0, 2, 900, 8, 6, 0, 9];
  // Type 7: h = 11 * 0.9 = 9.9, sorted[9] = 10, sorted[10] = 200, so 10 + 0.9 * 190 = 181; and
  // `python3 -c "import numpy; print(numpy.quantile([3,10,7,200,1,4,5,2,900,8,6,9], 0.9))"` gives 181.00000000000006.
  const expectedCap = 181;

  it('finds the type-7 quantile of the nonzero values and corrects the sums to the capped values', () => {
    const totals = totalsOf({ control, treatment });
    const rows = [...control.map((v) => ['control', v] as [string, number]), ...treatment.map((v) => ['treatment', v] as [string, number])];
    const cap = resolveFromTopValues(
      totals,
      0,
      0.9,
      listsOf([
        [rows.slice(0, 8), 5],
        [rows.slice(8), 5],
      ]),
    );
    expect(cap).toBeCloseTo(expectedCap, 12);
    const capped = (list: number[]) => list.map((v) => Math.min(v, expectedCap));
    const expected = totalsOf({ control: capped(control), treatment: capped(treatment) });
    for (const key of ['control', 'treatment']) {
      expect(totals.get(key)?.metrics[0]?.sum).toBeCloseTo(expected.get(key)?.metrics[0]?.sum as number, 9);
      expect(totals.get(key)?.metrics[0]?.sum_of_squares).toBeCloseTo(expected.get(key)?.metrics[0]?.sum_of_squares as number, 6);
    }
  });

  it('answers undefined when a statement cut short may have held values above the cap', () => {
    // Statement 1 holds the four largest values but returns only two of them; the cap's lower order
    // statistic is the 6th largest (k = 24, h = 18.4), which statement 1 may have cut.
    const rows: Array<[string, number]> = [
      ['control', 900],
      ['control', 800],
      ['control', 700],
      ['control', 600],
    ];
    const rest: Array<[string, number]> = Array.from({ length: 20 }, (_, i) => ['treatment', i + 1]);
    const totals = totalsOf({ control: rows.map(([, v]) => v), treatment: rest.map(([, v]) => v) });
    const before = JSON.stringify([...totals]);
    expect(
      resolveFromTopValues(
        totals,
        0,
        0.8,
        listsOf([
          [rows, 2],
          [rest, 50],
        ]),
      ),
    ).toBeUndefined();
    expect(JSON.stringify([...totals])).toBe(before);
    // Given all of them (fewer than its limit), it resolves: sorted[18] = 19, sorted[19] = 20, so 19.4.
    expect(
      resolveFromTopValues(
        totals,
        0,
        0.8,
        listsOf([
          [rows, 5],
          [rest, 50],
        ]),
      ),
    ).toBeCloseTo(19.4, 12);
  });

  it('is null without nonzero values, and a single statement returns just what the cap needs', () => {
    expect(resolveFromTopValues(totalsOf({ control: [0, 0] }), 0, 0.99, { statements: [] })).toBeNull();
    expect(topLimit(0.99, 1_000_000, false)).toBeGreaterThanOrEqual(10_002);
    expect(topLimit(0.99, 1_000_000, false)).toBeLessThanOrEqual(10_003);
    expect(topLimit(0.99, 10_000, true)).toBeGreaterThanOrEqual(210);
    expect(topLimit(0.51, 10_000_000, false)).toBe(100_000);
  });
});
