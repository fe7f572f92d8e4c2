/**
 * An experiment warns when its decision rule and minimum detectable effect need far more units
 * than min_sample_per_variant (docs/statistics.md section 9).
 */
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

describeEachDialect('experiment planning warnings', (server) => {
  let key: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
  });

  const create = async (overrides: Record<string, unknown>) => {
    const response = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, overrides) });
    expect(response.status).toBe(201);
    return response.body;
  };

  it('the default rule and MDE get an underpowered warning with the estimate', async () => {
    const created = await create({ key: 'default-rule' });
    expect(created.warnings).toHaveLength(1);
    const [warning] = created.warnings;
    // Textbook one-sided size at a 10% rate, 2% lift: (z_0.995 + z_0.8)^2 (0.1 x 0.9 + 0.102 x 0.898) / 0.002^2 = 530,210.
    expect(warning).toMatchObject({ code: 'underpowered', min_sample_per_variant: 20000, power: 0.8, assumed_baseline_rate: 0.1 });
    expect(warning.estimated_units_per_variant).toBeGreaterThan(525_000);
    expect(warning.estimated_units_per_variant).toBeLessThan(535_000);
    expect(warning.message).toContain('The Bayesian rule (chance of being best) needs about');
    expect(warning.message).toContain('the planned minimum sample of 20,000 units per variant');
    // Read by a person: no field names or rule ids in the words (the machine-readable fields stand beside them).
    expect(warning.message).not.toMatch(/\b[a-z]+_[a-z_]+\b|bayesian\.|frequentist\./);
    expect(warning.message).toContain(warning.estimated_units_per_variant.toLocaleString('en-US'));
    const read = await server().request('GET', `/v1/experiments/${created.id}`, { key });
    expect(read.body.warnings).toEqual(created.warnings);
    const listed = await server().request('GET', '/v1/experiments', { key });
    expect(listed.body.data.find((e: { id: string }) => e.id === created.id).warnings).toEqual(created.warnings);
  });

  it('the mSPRT with the default MDE needs over 40 times min_sample_per_variant, and 5 times even at a 50% rate', async () => {
    const created = await create({ key: 'msprt-default', decision_rule: { method: 'frequentist.sequential_msprt' } });
    const [warning] = created.warnings;
    expect(warning.code).toBe('underpowered');
    expect(warning.estimated_units_per_variant).toBeGreaterThan(40 * 20_000);
    expect(warning.message).toMatch(/mSPRT mixture is tuned to the minimum detectable effect/);
    expect(warning.message).not.toMatch(/\b[a-z]+_[a-z_]+\b|bayesian\.|frequentist\./);
    const atFifty = Number(/Even at 50%, the least noisy rate, it needs about ([\d,]+)/.exec(warning.message)?.[1]?.replaceAll(',', ''));
    expect(atFifty).toBeGreaterThan(5 * 20_000);
  });

  it('a large MDE, or a min_sample_per_variant that plans for the estimate, has no warning', async () => {
    for (const method of ['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt']) {
      const created = await create({ key: `large-mde-${method}`, decision_rule: { method, minimum_detectable_effect: 0.2 } });
      expect(created.warnings, method).toEqual([]);
    }
    const created = await create({ key: 'planned' });
    const estimate = created.warnings[0].estimated_units_per_variant as number;
    const patched = await server().request('PATCH', `/v1/experiments/${created.id}`, {
      key,
      body: { decision_rule: { min_sample_per_variant: Math.ceil(estimate / 2) } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.warnings).toEqual([]);
  });

  it('assumes a conversion rate only for a binary primary metric: a revenue or duration metric gets no made-up estimate', async () => {
    const metric = async (body: Record<string, unknown>) =>
      (await server().request('POST', '/v1/metrics', { key, body: { name: String(body.key), ...body } })).body.id as string;
    const binary = await metric({ key: 'converted', event_key: 'buy', kind: 'binary' });
    const revenue = await metric({ key: 'revenue', event_key: 'buy', kind: 'revenue', aggregation: 'sum', property_path: 'amount' });
    const load = await metric({ key: 'load', event_key: 'page', kind: 'duration', aggregation: 'mean', property_path: 'ms', unit: 'ms' });
    expect((await create({ key: 'on-binary', primary_metric_id: binary })).warnings[0]).toMatchObject({ code: 'underpowered', assumed_baseline_rate: 0.1 });
    expect((await create({ key: 'on-revenue', primary_metric_id: revenue })).warnings).toEqual([]);
    const onLoad = await create({ key: 'on-load', primary_metric_id: load });
    expect(onLoad.warnings).toEqual([]);
    expect((await server().request('GET', `/v1/experiments/${onLoad.id}`, { key })).body.warnings).toEqual([]);
    const listed = (await server().request('GET', '/v1/experiments?limit=200', { key })).body.data;
    expect(listed.find((e: { key: string }) => e.key === 'on-load').warnings).toEqual([]);
    expect(listed.find((e: { key: string }) => e.key === 'on-binary').warnings).toHaveLength(1);
    // Switching the primary metric to the binary one brings the estimate back.
    const switched = await server().request('PATCH', `/v1/experiments/${onLoad.id}`, { key, body: { primary_metric_id: binary } });
    expect(switched.body.warnings).toHaveLength(1);
  });

  it('no longer warns once the experiment stopped: planning is over', async () => {
    const created = await create({ key: 'to-stop' });
    const started = await server().request('POST', `/v1/experiments/${created.id}/start`, { key });
    expect(started.body.warnings).toHaveLength(1);
    const stopped = await server().request('POST', `/v1/experiments/${created.id}/stop`, { key, body: { reason: 'inconclusive' } });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.warnings).toEqual([]);
    expect((await server().request('GET', `/v1/experiments/${created.id}`, { key })).body.warnings).toEqual([]);
  });

  it('more treatments split alpha, so the estimate grows', async () => {
    const two = await create({ key: 'two-arms', decision_rule: { method: 'frequentist.sequential_msprt' } });
    const four = await create({
      key: 'four-arms',
      decision_rule: { method: 'frequentist.sequential_msprt' },
      variants: ['a', 'b', 'c', 'd'].map((k) => ({ key: k, weight: 25 })),
    });
    expect(four.warnings[0].estimated_units_per_variant).toBeGreaterThan(two.warnings[0].estimated_units_per_variant);
  });
});
