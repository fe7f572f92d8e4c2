/**
 * A unit that a GrowthBook SDK buckets locally (hash v2, seed = experiment key, weights / 100) gets
 * the same variant from POST /v1/assign, also on the buckets where GrowthBook's float sums move a
 * boundary (0.2 + 0.2 + 0.2 = 0.6000000000000001) and on those where it does not (0.8).
 */
import { GrowthBookClient } from '@growthbook/growthbook';
import { beforeAll, expect, it } from 'vitest';
import { bucketOf } from '../../src/features/assignment/bucketing.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { runningExperiment } from './helpers.js';

/** Unit ids whose bucket in `experimentKey` is one of `buckets`, one per bucket. */
function unitsOnBuckets(experimentKey: string, buckets: number[]): Map<number, string> {
  const found = new Map<number, string>();
  for (let i = 0; found.size < buckets.length && i < 2_000_000; i++) {
    const bucket = bucketOf(experimentKey, `user-${i}`);
    if (buckets.includes(bucket) && !found.has(bucket)) found.set(bucket, `user-${i}`);
  }
  if (found.size !== buckets.length) throw new Error(`no unit found for some of ${buckets.join(', ')}`);
  return found;
}

const gb = new GrowthBookClient({});
function growthBookVariant(experimentKey: string, unitId: string, weights: number[]): number {
  const result = gb.runInlineExperiment(
    {
      key: experimentKey,
      variations: weights.map((_, i) => i) as [number, number, ...number[]],
      weights: weights.map((w) => w / 100),
      hashVersion: 2,
      seed: experimentKey,
      hashAttribute: 'id',
    },
    { attributes: { id: unitId } },
  );
  return result.variationId;
}

describeEachDialect('assignment matches the GrowthBook JS SDK on boundary buckets', (server) => {
  let key: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
  });

  it.each([
    { split: [20, 20, 20, 20, 20], floatBoundaries: [6000], exactBoundaries: [8000] },
    { split: [10, 20, 30, 40], floatBoundaries: [3000, 6000], exactBoundaries: [1000] },
  ])('$split: units on buckets $floatBoundaries and $exactBoundaries get the SDK variant', async ({ split, floatBoundaries, exactBoundaries }) => {
    const experimentKey = `gb-${split.join('-')}`;
    const variants = split.map((weight, i) => ({ key: `v${i}`, weight }));
    await runningExperiment(server(), key, environmentId, { key: experimentKey, variants });
    const units = unitsOnBuckets(experimentKey, [...floatBoundaries, ...exactBoundaries, ...floatBoundaries.map((b) => b - 1), 0, 9999]);
    for (const [bucket, unitId] of units) {
      const answer = await server().request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id: unitId } });
      expect(answer.status).toBe(200);
      const sdkIndex = growthBookVariant(experimentKey, unitId, split);
      expect(answer.body.variant, `${unitId} on bucket ${bucket}`).toBe(`v${sdkIndex}`);
    }
    // On a float boundary the unit stays in the earlier variant, as in the SDK (exact integer
    // ranges would have put it in the next one); on an exact boundary it goes to the next.
    const cumulative = split.reduce<number[]>((acc, w) => [...acc, (acc.at(-1) ?? 0) + w], []);
    const storedVariant = async (bucket: number) =>
      (await server().request('GET', `/v1/assignments/${units.get(bucket) as string}`, { key })).body.assignments[0].variant;
    for (const bucket of floatBoundaries) expect(await storedVariant(bucket)).toBe(`v${cumulative.indexOf(bucket / 100)}`);
    for (const bucket of exactBoundaries) expect(await storedVariant(bucket)).toBe(`v${cumulative.indexOf(bucket / 100) + 1}`);
  });
});
