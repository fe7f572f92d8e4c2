import { describe, expect, it } from 'vitest';
import { applyBanditWeights } from '../../src/features/experiments/bandit-weights.js';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { chromiumAvailable, screenshot } from './browser-support.js';
import { useSignedInUi } from './signed-in-ui.js';

// Bandits in the admin UI (docs/experiments.md "14. Bandits"): the allocation fields on the
// new-experiment form, the allocation and the weights over time on the experiment and results
// pages, and no hand-made weight editor while a bandit runs.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: bandit allocation and its weights over time', () => {
  let metricId = '';

  const ui = useSignedInUi('Bandit Co', async ({ server, boot }) => {
    metricId = await createMetric(server, boot.key, { key: 'bought', name: 'Bought', event_key: 'buy', kind: 'binary' });
  });

  it('creates a bandit from the form with a 12-hour burn-in', async () => {
    const { page } = ui.browser;
    await page.goto(`${ui.server.url}/ui/experiments`);
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Key', { exact: true }).fill('bandit-ui');
    await page.getByLabel('Name', { exact: true }).fill('Three texts');
    await page.getByLabel('Hypothesis').fill('One text sells best');
    await page.getByLabel('Primary metric').selectOption({ label: 'Bought (binary)' });
    await page.getByLabel(/Bandit: send more new units/).check();
    await page.getByLabel('Burn-in (hours)').fill('12');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByText(/Allocation: bandit \(Thompson sampling\): 12 h burn-in/).waitFor();
    // Said in words, not field names.
    const allocation = await page.getByTestId('allocation').innerText();
    expect(allocation).toContain('at least 1% of new units for every variant, a winner once a variant has a 95% chance of being best');
    expect(allocation).not.toMatch(/prob_best|weight_floor|_/);
    const experimentId = page.url().split('/').pop() ?? '';
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body.allocation).toEqual({
      type: 'bandit',
      burn_in_hours: 12,
      update_every_minutes: 60,
      min_units_per_variant: 100,
      weight_floor: 0.01,
      stop_at_prob_best: 0.95,
    });
  });

  it('shows each period’s weights on the experiment and results pages, and no weight editor while the bandit runs', async () => {
    const { page } = ui.browser;
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'bandit-periods',
      name: 'Two texts',
      hypothesis: 'One text sells best',
      primary_metric_id: metricId,
      allocation: { type: 'bandit' },
      variants: [
        { key: 'control', weight: 50 },
        { key: 'treatment', weight: 50 },
      ],
    });
    // The experiments slice's own write, as the reweight job makes it (the job is tested through HTTP in test/experiments/bandits.test.ts).
    const written = await applyBanditWeights(ui.server.ctx, experiment.id, {
      weights: { control: 20, treatment: 80 },
      seed: 4242,
      probBest: { control: 0.1, treatment: 0.9 },
      basedOnPeriods: 1,
    });
    expect(written?.allocation_periods).toHaveLength(2);
    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    const table = page.getByRole('table', { name: 'Weights per period' });
    await table.waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t').slice(1))).toEqual([
      ['50%', '50%', 'start'],
      ['20%', '80%', '4242'],
    ]);
    await screenshot(page, 'bandit-weights-over-time');
    // A running bandit sets its weights itself: the settings offer none to change.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('group', { name: 'Decision rule' }).waitFor();
    expect(await page.getByRole('group', { name: 'Weights' }).count()).toBe(0);
    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}/results`);
    await page.getByRole('table', { name: 'Weights per period' }).waitFor();
  });

  it('shows one stopping rule for a bandit, the bandit’s own, and measures the progress against its minimum; a variant keeps its colour across charts', async () => {
    const { page } = ui.browser;
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'bandit-rule',
      name: 'Four texts',
      hypothesis: 'One text sells best',
      primary_metric_id: metricId,
      // A decision rule that does not apply to a bandit: 99.5% and 20,000 units.
      decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.995, min_sample_per_variant: 20_000 },
      allocation: { type: 'bandit', min_units_per_variant: 100, stop_at_prob_best: 0.95 },
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    const units = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 60, treatment: 60 }, 'rule');
    const now = Date.now();
    await sendEvents(ui.server, ui.boot.key, [
      ...(units.control ?? []).slice(0, 12).map((unit_id) => ({ event_key: 'buy', unit_id, occurred_at: now })),
      ...(units.treatment ?? []).slice(0, 20).map((unit_id) => ({ event_key: 'buy', unit_id, occurred_at: now })),
    ]);
    await applyBanditWeights(ui.server.ctx, experiment.id, {
      weights: { control: 30, treatment: 70 },
      seed: 7,
      probBest: { control: 0.2, treatment: 0.8 },
      basedOnPeriods: 1,
    });
    const snapshot = await compute(ui.server, ui.boot.key, experiment.id);
    expect(snapshot.decision.recommendation.reasons[0].message).toContain('at least 100 units per variant');

    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    await page.getByTestId('allocation').waitFor();
    const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
    expect(text).toMatch(/Stopping rule Bandit: a variant’s chance of being best reaches 95\.0%/i);
    expect(text).toMatch(/Minimum sample 100 units per variant/i);
    // The decision rule's power warning does not apply to a bandit either.
    expect(text).not.toContain('Too few units planned');
    expect(text).not.toMatch(/99\.5|20,000/);

    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}/results`);
    await expect(page.getByTestId('sample-progress').innerText()).resolves.toMatch(/^60 of 100 units per variant \(60%\)/);
    const reasons = await page.getByTestId('reasons').innerText();
    expect(reasons).toContain('at least 100 units per variant');
    expect(reasons).not.toContain('20,000');
    // One colour per variant on the page: the weights over time and the intervals agree.
    await page.locator('.interval-mean[data-variant="treatment"]').first().waitFor({ state: 'attached' });
    for (const variant of ['control', 'treatment']) {
      const weights = await page.locator(`.weights-over-time rect[data-variant="${variant}"]`).first().getAttribute('fill');
      const interval = await page.locator(`.interval-mean[data-variant="${variant}"]`).first().getAttribute('fill');
      expect(weights, variant).toBe(interval);
    }
    await screenshot(page, 'bandit-one-rule');
  });
});
