import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { applyBanditWeights } from '../../src/features/experiments/bandit-weights.js';
import { createExperiment, createMetric, exposeExactly, TWO_ARMS } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// Issue #52 in Chromium: forms in a person's units (percentages typed as %, windows in days, a
// primary metric to start from, validator wording in words), a ratio metric that names its two
// metrics, an audit log that reads a reweighting and a snapshot in words with peeks folded, the
// header naming the signed-in key, and an experiment page saying where the experiment stands.

const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/;
const SNAKE_KEY = /\b[a-z]+_[a-z_]+\b/;

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: names and units (#52)', () => {
  const ui = useAdminUi();

  async function experimentByKey(key: string) {
    const list = await ui.server.request('GET', '/v1/experiments?limit=200', { key: ui.boot.key });
    return (list.body.data as any[]).find((experiment) => experiment.key === key);
  }

  async function fillNewExperiment(page: Page, key: string) {
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByLabel('Name', { exact: true }).fill(`Experiment ${key}`);
    await page.getByLabel('Hypothesis').fill('It helps.');
  }

  it('starts a new experiment from a primary metric and takes the threshold, effect, floor and stopping chance in percent', async () => {
    const { page } = ui.browser;
    const metricId = await createMetric(ui.server, ui.boot.key, {
      key: 'checkout.completed',
      name: 'Checkout completed',
      event_key: 'checkout',
      kind: 'binary',
    });
    await page.goto(ui.at('/experiments/new'));
    await page.getByLabel('Threshold (%)').waitFor();
    await expect.poll(() => page.getByLabel('Primary metric').inputValue()).toBe(metricId);
    await expect(page.getByLabel('Threshold (%)').inputValue()).resolves.toBe('99.5');
    await expect(page.getByLabel('Minimum detectable effect (%)').inputValue()).resolves.toBe('2');
    await fillNewExperiment(page, 'percent-form');
    await page.getByLabel('Threshold (%)').fill('97.5');
    await page.getByLabel('Minimum detectable effect (%)').fill('5');
    await page.getByLabel('Bandit: send more new units to the variants doing best').check();
    await expect(page.getByLabel('Weight floor (%)').inputValue()).resolves.toBe('1');
    await expect(page.getByLabel('Winner at chance of being best (%)').inputValue()).resolves.toBe('95');
    await page.getByLabel('Weight floor (%)').fill('2.5');
    await page.getByLabel('Winner at chance of being best (%)').fill('90');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByTestId('experiment-summary').waitFor();
    const created = await experimentByKey('percent-form');
    expect(created.primary_metric_id).toBe(metricId);
    expect(created.decision_rule).toMatchObject({ posterior_threshold: 0.975, minimum_detectable_effect: 0.05 });
    expect(created.allocation).toMatchObject({ type: 'bandit', weight_floor: 0.025, stop_at_prob_best: 0.9 });

    // The editors read the API's fractions back as percentages.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const rule = page.getByRole('group', { name: 'Decision rule' });
    await expect(rule.getByLabel('Threshold (%)').inputValue()).resolves.toBe('97.5');
    await expect(rule.getByLabel('Minimum detectable effect (%)').inputValue()).resolves.toBe('5');
    const allocation = page.getByRole('group', { name: 'Allocation' });
    await expect(allocation.getByLabel('Weight floor (%)').inputValue()).resolves.toBe('2.5');
    await expect(allocation.getByLabel('Winner at chance of being best (%)').inputValue()).resolves.toBe('90');
  });

  it('says what is wrong in words beside the field, never the validator’s wording', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/experiments/new'));
    await page.getByLabel('Threshold (%)').waitFor();
    await fillNewExperiment(page, 'too-many-dimensions');
    await page.getByLabel('Dimensions').fill('country, device, plan, browser, language, channel');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    const field = page.locator('.field-invalid').filter({ has: page.getByLabel('Dimensions') });
    await expect(field.locator('.field-error').innerText()).resolves.toBe('can hold at most 5');
    await expect(page.locator('main').innerText()).resolves.not.toMatch(/must NOT|must match pattern/);
    expect(await experimentByKey('too-many-dimensions')).toBeUndefined();
  });

  it('takes a metric’s window in days and shows it in days; a ratio metric names its numerator and denominator', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/metrics'));
    const form = page.getByRole('form', { name: 'New metric' });
    await form.getByLabel('Key', { exact: true }).fill('orders');
    await form.getByLabel('Name', { exact: true }).fill('Orders');
    await form.getByLabel('Event key').fill('order.placed');
    await expect(form.getByLabel('Per-unit window (days)').inputValue()).resolves.toBe('7');
    await form.getByLabel('Per-unit window (days)').fill('14');
    await form.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('link', { name: 'Orders', exact: true }).waitFor();
    const metrics = (await ui.server.request('GET', '/v1/metrics?limit=200', { key: ui.boot.key })).body.data as any[];
    const orders = metrics.find((metric) => metric.key === 'orders');
    expect(orders.unit_dedup_window).toBe('P14D');
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    await expect(page.locator('.facts').innerText()).resolves.toMatch(/Per-unit window\s+14 days/i);
    await expect(page.getByRole('form', { name: 'Edit metric' }).getByLabel('Per-unit window (days)').inputValue()).resolves.toBe('14');

    const visits = await createMetric(ui.server, ui.boot.key, { key: 'visits', name: 'Visits', event_key: 'visit', kind: 'count' });
    const ratio = await ui.server.request('POST', '/v1/metrics', {
      key: ui.boot.key,
      body: { key: 'orders-per-visit', name: 'Orders per visit', kind: 'ratio', numerator_metric_id: orders.id, denominator_metric_id: visits },
    });
    expect(ratio.status, ratio.text).toBe(201);
    await page.goto(ui.at(`/metrics/${ratio.body.id}`));
    const parts = page.getByTestId('ratio-parts');
    await expect.poll(() => parts.innerText()).toBe('The sum of Orders over the sum of Visits, per variant.');
    await expect(parts.getByRole('link', { name: 'Orders' }).getAttribute('href')).resolves.toBe(`/ui/metrics/${orders.id}`);
  });

  it('reads a reweighting in percentages and a broken split’s snapshot by its recommendation; folds repeated peeks', async () => {
    const { page } = ui.browser;
    const metricId = await createMetric(ui.server, ui.boot.key, { key: 'bought', name: 'Bought', event_key: 'buy', kind: 'binary' });
    const bandit = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'headline-bandit',
      name: 'Headline bandit',
      primary_metric_id: metricId,
      allocation: { type: 'bandit' },
      variants: TWO_ARMS,
    });
    await applyBanditWeights(ui.server.ctx, bandit.id, {
      weights: { control: 20, treatment: 80 },
      seed: 7,
      probBest: { control: 0.0312, treatment: 0.9688 },
      basedOnPeriods: 1,
    });

    const split = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'broken-split',
      name: 'Broken split',
      variants: TWO_ARMS,
    });
    await exposeExactly(ui.server, ui.boot.key, split, { control: 200, treatment: 100 }, 'split');
    const computed = await ui.server.request('POST', `/v1/experiments/${split.id}/results/compute`, { key: ui.boot.key });
    expect(computed.body.decision.recommendation.action).toBe('investigate');
    for (let i = 0; i < 3; i += 1) {
      await page.goto(ui.at(`/experiments/${split.id}/results`));
      await page
        .getByRole('heading', { name: /Broken split/ })
        .first()
        .waitFor();
    }

    await page.goto(ui.at('/audit'));
    const table = page.getByRole('table', { name: 'Audit entries' });
    await table.waitFor();
    const reweight = page.getByRole('row').filter({ hasText: 'experiment bandit reweighted' });
    await expect(reweight.getByTestId('payload-summary').innerText()).resolves.toBe(
      'Weights control 50% → 20%, treatment 50% → 80%; chance of being best: control 3.1%, treatment 96.9%',
    );
    const snapshot = page.getByRole('row').filter({ hasText: 'experiment results computed' });
    await expect(snapshot.getByTestId('payload-summary').innerText()).resolves.toMatch(/^Snapshot computed; recommendation: investigate/);
    await expect(snapshot.innerText()).resolves.not.toMatch(/winner/i);
    const peeks = page.getByTestId('peek-run');
    await expect(peeks.count()).resolves.toBe(1);
    await expect(peeks.innerText()).resolves.toMatch(/results viewed 3 times/);
    await screenshot(page, 'audit-names');
    // The header names the signed-in key by its name, the fragment only in its tooltip.
    const keys = (await ui.server.request('GET', '/v1/api-keys?limit=200', { key: ui.boot.key })).body.data as any[];
    const signedIn = keys.find((key) => key.id === ui.boot.keyId);
    await expect(page.getByTestId('signed-in-as').innerText()).resolves.toBe(signedIn.name);

    // What the page shows (JSON views closed) has no ids and no snake_case keys.
    const shown = await table.innerText();
    expect(shown).not.toMatch(ULID);
    // An API key's prefix (vd_srv_all) is the visible part of a secret, shown beside its name: not a field key.
    expect(shown.split('\n').filter((line) => SNAKE_KEY.test(line) && !/^vd_(srv|cli)_[a-z]+$/.test(line.trim()))).toEqual([]);
    // The experiment page says where it stands and that its split is broken, without opening the results.
    await page.goto(ui.at(`/experiments/${split.id}`));
    await expect(page.getByTestId('current-standing').innerText()).resolves.toMatch(/^Latest snapshot: Investigate/i);
    await expect(page.getByTestId('current-srm').innerText()).resolves.toContain('The split does not match the weights');
  });
});
