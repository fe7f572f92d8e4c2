import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyBanditWeights } from '../../src/features/experiments/bandit-weights.js';
import { createExperiment, createMetric } from '../analysis/support.js';
import { bufferConfig } from '../events/support.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';

// A bandit's new weights reach the assignment caches of every process (docs/experiments.md
// "14. Bandits"): two servers on one database and one Redis, the weights written on the first
// (the experiments slice's write the bandit.reweight job makes), new units assigned on the second.

async function treatedShare(server: TestServer, key: string, prefix: string, count: number): Promise<number> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => server.request('POST', '/v1/assign', { key, body: { experiment_key: 'bandit-relay', unit_id: `${prefix}-${i}` } })),
  );
  for (const answer of answers) expect(answer.status, answer.text).toBe(200);
  return answers.filter((answer) => answer.body.variant === 'treatment').length / count;
}

describeEach('a bandit’s weights reach every process', { buffers: ['redis'] }, ({ dialect, buffer }) => {
  let first: TestServer;
  let second: TestServer;
  let boot: Bootstrap;

  beforeAll(async () => {
    // Definitions cached for 10 minutes: only the change feed can tell the second process in time.
    const config = { buffer: bufferConfig(buffer), assignmentCacheTtlMs: 600_000 };
    first = await startTestServer(dialect, { config });
    second = await startTestServer(dialect, { config, database: first.database });
    boot = await first.bootstrap('Relay');
  }, 60_000);

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('new units on the other process follow the new weights at once; its cached units keep their variants', async () => {
    const metricId = await createMetric(first, boot.key, { key: 'bought', event_key: 'buy', kind: 'binary' });
    const experiment = await createExperiment(first, boot.key, {
      environment_id: boot.environmentId,
      key: 'bandit-relay',
      primary_metric_id: metricId,
      allocation: { type: 'bandit' },
      variants: [
        { key: 'control', weight: 50 },
        { key: 'treatment', weight: 50 },
      ],
    });
    // The second process caches the definition (and these units) at 50/50.
    const warm = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        second.request('POST', '/v1/assign', { key: boot.key, body: { experiment_key: 'bandit-relay', unit_id: `warm-${i}` } }),
      ),
    );
    const written = await applyBanditWeights(first.ctx, experiment.id, {
      weights: { control: 10, treatment: 90 },
      seed: 7,
      probBest: { control: 0.02, treatment: 0.98 },
      basedOnPeriods: 1,
    });
    expect(written?.variants.map((v) => v.weight)).toEqual([10, 90]);
    // The change travels through Redis; give it up to 5 seconds to arrive.
    const deadline = Date.now() + 5_000;
    let round = 0;
    while ((await treatedShare(second, boot.key, `probe-${round++}`, 50)) < 0.75 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // 400 new units: 90% ± 4 standard deviations (sd 1.5%).
    const share = await treatedShare(second, boot.key, 'fresh', 400);
    expect(Math.abs(share - 0.9)).toBeLessThanOrEqual(4 * Math.sqrt((0.9 * 0.1) / 400));
    const again = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        second.request('POST', '/v1/assign', { key: boot.key, body: { experiment_key: 'bandit-relay', unit_id: `warm-${i}` } }),
      ),
    );
    expect(again.map((answer) => answer.body.variant)).toEqual(warm.map((answer) => answer.body.variant));
  }, 60_000);
});
