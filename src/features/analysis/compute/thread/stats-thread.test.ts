import { afterAll, describe, expect, it } from 'vitest';
import type { BuildInput } from '../build.js';
import type { BreakdownBuildInput } from '../breakdowns.js';
import { inlineStats, StatsThread, statsRunnerFor } from './stats-thread.js';
import { metricRow } from '../../../../../test/support/metric-row.js';
import { NONE_BUCKET, OTHER_BUCKET, type VariantTotals } from '../../store/contract.js';
import { EMPTY_TOTALS } from '../../store/fold.js';

const DAY = 24 * 60 * 60 * 1000;

const converted = metricRow({ id: 'm-bin', key: 'converted', name: 'Converted', kind: 'binary', aggregation: 'count' });

const variants = [
  { id: '1', key: 'control', weight: 34, is_control: true },
  { id: '2', key: 'b', weight: 33, is_control: false },
  { id: '3', key: 'c', weight: 33, is_control: false },
];

function totals(rows: Array<[string, number, number]>): Map<string, VariantTotals> {
  return new Map(
    rows.map(([key, units, conversions]) => [
      key,
      { variant_key: key, units, metrics: [{ ...EMPTY_TOTALS, n: units, sum: conversions, sum_of_squares: conversions, conversions }] },
    ]),
  );
}

/** Three arms (seeded Monte Carlo) and a two-arm slice with counts large enough for the exact Beta sum's long loop. */
const snapshotInput: BuildInput = {
  variants,
  decisionRule: { method: 'bayesian.always_valid_evalue' },
  startedAt: 0,
  stoppedAt: null,
  computedAt: 10 * DAY,
  primary: converted,
  guardrails: [converted],
  totals: totals([
    ['control', 120_000, 12_000],
    ['b', 118_000, 12_300],
    ['c', 119_500, 11_800],
  ]),
  previous: null,
};

const breakdownInput: BreakdownBuildInput = {
  variants,
  analysed: variants,
  primary: converted,
  breakdowns: [
    {
      key: { name: 'country', kind: 'dimension' },
      values: ['US', 'DE'],
      buckets: new Map([
        [
          0,
          totals([
            ['control', 40_000, 4_000],
            ['b', 39_000, 4_200],
            ['c', 40_100, 3_900],
          ]),
        ],
        [
          1,
          totals([
            ['control', 9_000, 800],
            ['b', 9_100, 820],
            ['c', 9_050, 700],
          ]),
        ],
        [
          OTHER_BUCKET,
          totals([
            ['control', 300, 30],
            ['b', 280, 40],
            ['c', 310, 20],
          ]),
        ],
        [NONE_BUCKET, new Map()],
      ]),
    },
  ],
};

describe('the statistics thread', () => {
  const thread = new StatsThread();
  afterAll(() => thread.close());

  it('gives exactly the snapshot and breakdowns the caller’s own thread computes', async () => {
    const [snapshot, breakdowns] = await Promise.all([thread.run('snapshot', snapshotInput), thread.run('breakdowns', breakdownInput)]);
    expect(snapshot).toEqual(await inlineStats.run('snapshot', snapshotInput));
    expect(breakdowns).toEqual(await inlineStats.run('breakdowns', breakdownInput));
    expect(snapshot.per_variant.map((variant) => variant.prob_best)).toHaveLength(3);
    expect(breakdowns[0]?.values.map((slice) => slice.value)).toEqual(['US', 'DE', '(other)']);
    expect(thread.pending).toBe(0);
  });

  it('answers many tasks sent at once, each with its own result', async () => {
    const inputs = [100, 200, 300, 400, 500].map((conversions) => ({
      ...snapshotInput,
      totals: totals([
        ['control', 10_000, conversions],
        ['b', 10_000, conversions + 50],
        ['c', 10_000, conversions - 50],
      ]),
    }));
    const answers = await Promise.all(inputs.map((input) => thread.run('snapshot', input)));
    expect(answers.map((answer) => answer.per_variant[1]?.conversions)).toEqual([150, 250, 350, 450, 550]);
  });

  it('passes a failure of the statistics back as an error with its message', async () => {
    const broken = { ...snapshotInput, totals: totals([['control', 10, 20]]) };
    const inline = await inlineStats.run('snapshot', broken).catch((error: Error) => error);
    expect(inline).toBeInstanceOf(Error);
    await expect(thread.run('snapshot', broken)).rejects.toThrow((inline as Error).message);
    // the thread survives a failed task
    await expect(thread.run('snapshot', snapshotInput)).resolves.toEqual(await inlineStats.run('snapshot', snapshotInput));
  });

  it('rejects an input that cannot be sent to a thread, and keeps nothing pending', async () => {
    const unsendable = { ...snapshotInput, decisionRule: { method: () => 'x' } } as unknown as BuildInput;
    await expect(thread.run('snapshot', unsendable)).rejects.toThrow(/could not be cloned/);
    expect(thread.pending).toBe(0);
  });

  it('fails the tasks of a thread that stops, then starts a new one for the next task', async () => {
    const inFlight = thread.run('snapshot', snapshotInput);
    await thread.close();
    await expect(inFlight).rejects.toThrow(/statistics thread/);
    await expect(thread.run('breakdowns', breakdownInput)).resolves.toHaveLength(1);
  });

  it('runs on the caller’s thread when analysis threads are off, and on one shared thread otherwise', () => {
    expect(statsRunnerFor(0)).toBe(inlineStats);
    expect(statsRunnerFor(2)).toBeInstanceOf(StatsThread);
    expect(statsRunnerFor(4)).toBe(statsRunnerFor(2));
  });
});
