import { beforeAll, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, sendEvents, TWO_ARMS } from '../analysis/support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { answersFor, heldOut, startedHoldout, unitIds } from './support.js';

describeEachDialect('an experiment’s analysis under a holdout', (server) => {
  let key: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap('Holdout analysis'));
  });

  it('leaves held-out units out of the experiment’s own analysis, and the split of the rest stays even', async () => {
    await startedHoldout(server(), key, { environment_id: environmentId, percent: 20 });
    const metricId = await createMetric(server(), key, { key: 'purchase', event_key: 'purchase', kind: 'binary', aggregation: 'count' });
    const experiment = await createExperiment(server(), key, {
      environment_id: environmentId,
      key: 'held-analysis',
      variants: TWO_ARMS,
      primary_metric_id: metricId,
    });
    const units = unitIds('buyer', 600);
    const answers = await answersFor(server(), key, 'held-analysis', units);
    const held = heldOut(answers);
    expect(held.length).toBeGreaterThan(80);
    // Every unit buys, held-out ones too: were they counted, the control arm would swell.
    await sendEvents(
      server(),
      key,
      units.map((unit_id) => ({ event_key: 'purchase', unit_id, occurred_at: server().ctx.clock.now() + 1_000 })),
    );
    const snapshot = await compute(server(), key, experiment.id);

    const bucketed = (variant: string) => [...answers.values()].filter((answer) => answer.reason === 'bucketed' && answer.variant === variant).length;
    expect(snapshot.traffic).toEqual([
      { variant_key: 'control', weight: 50, exposed_units: bucketed('control') },
      { variant_key: 'treatment', weight: 50, exposed_units: bucketed('treatment') },
    ]);
    expect(bucketed('control') + bucketed('treatment')).toBe(units.length - held.length);
    expect(snapshot.srm_warning).toBe(false);
    expect(snapshot.srm_chi_squared_p).toBeGreaterThan(0.001);
  });
});
