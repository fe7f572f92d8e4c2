import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExperiment, createMetric, exposeExactly, sendEvents, compute } from '../analysis/support.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// Effects in the admin UI (docs/ui.md "What a person can do", Results): the results page leads with the effect (a forest plot
// coloured by the metric's direction) and warns of a guardrail regression; the metric forms take
// direction, capping and the ratio kind; a metric can be edited and deleted.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: effects, guardrail warning, metric direction, capping, ratio, edit and delete', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;
  let experiment: any;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Effects Co');
    ids.converted = await createMetric(server, boot.key, { key: 'converted', event_key: 'buy', kind: 'binary' });
    ids.errors = await createMetric(server, boot.key, { key: 'errors', event_key: 'app.error', kind: 'binary', higher_is_better: false });
    ids.orders = await createMetric(server, boot.key, { key: 'orders', event_key: 'buy', kind: 'count' });
    ids.spare = await createMetric(server, boot.key, { key: 'spare', name: 'Spare metric', event_key: 'spare', kind: 'count' });
    experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'effects-ui',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: ids.converted,
      guardrail_metric_ids: [ids.errors],
      decision_rule: { posterior_threshold: 0.95, min_sample_per_variant: 50 },
    });
    const units = await exposeExactly(server, boot.key, experiment, { control: 60, treatment: 60 });
    const now = Date.now();
    const events = (['control', 'treatment'] as const).flatMap((variant) =>
      (units[variant] ?? []).flatMap((unit_id, i) => [
        ...((variant === 'control' ? i % 5 === 0 : i % 2 === 0) ? [{ event_key: 'buy', unit_id, occurred_at: now }] : []),
        ...((variant === 'control' ? i % 10 === 0 : i % 2 === 1) ? [{ event_key: 'app.error', unit_id, occurred_at: now }] : []),
      ]),
    );
    await sendEvents(server, boot.key, events);
    await compute(server, boot.key, experiment.id);
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('scores each metric by name, coloured by direction, and does not recommend shipping over a guardrail regression', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${experiment.id}/results`);
    await page.getByTestId('decision-header').waitFor();
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 2)).toEqual(['Decision', 'Scorecard']);
    // The primary metric: more conversions is better, and the treatment converts clearly more.
    await expect(page.getByTestId('score-converted-treatment').getAttribute('data-reading')).resolves.toBe('better');
    // The errors guardrail: lower is better, and the treatment has five times the errors: red.
    await expect(page.getByTestId('score-errors-treatment').getAttribute('data-reading')).resolves.toBe('worse');
    await expect(page.getByTestId('recommendation').innerText()).resolves.not.toMatch(/ship/i);
    await expect(page.getByTestId('reasons').locator('[data-code="guardrail_regression"]').count()).resolves.toBe(1);
    await page.getByTestId('details-converted').locator('summary').click();
    const chart = page.getByTestId('details-converted').getByTestId('effect-chart');
    await expect(chart.getByTestId('effect-treatment').getAttribute('data-reading')).resolves.toBe('better');
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/treatment: \+\d+\.\d% .*chance to beat control > 99\.9%/);
    await page.getByRole('table', { name: 'converted: effect against the control' }).getByText('> 99.9%').waitFor();
    await screenshot(page, 'results-effects');
  });

  it('creates a lower-is-better, percentile-capped metric and a ratio metric from the form', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/`);
    await page.getByRole('link', { name: 'Metrics' }).click();
    await page.getByLabel('Key', { exact: true }).fill('load-time');
    await page.getByLabel('Name', { exact: true }).fill('Load time');
    await page.getByLabel('Kind').selectOption('duration');
    await page.getByLabel('Event key').fill('page.load');
    await page.getByLabel('Aggregation').selectOption('mean');
    await page.getByLabel('Property path').fill('ms');
    await page.getByLabel('Unit', { exact: true }).fill('ms');
    await page.getByLabel('Direction').selectOption('false');
    await page.getByLabel('Capping').selectOption('percentile');
    await page.getByLabel('Cap percentile').fill('0.99');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('table', { name: 'Metrics' }).getByText('Load time').waitFor();

    await page.getByLabel('Key', { exact: true }).fill('orders-per-conversion');
    await page.getByLabel('Name', { exact: true }).fill('Orders per converter');
    await page.getByLabel('Kind').selectOption('ratio');
    await page.getByLabel('Numerator metric').selectOption(ids.orders as string);
    await page.getByLabel('Denominator metric').selectOption(ids.converted as string);
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('table', { name: 'Metrics' }).getByText('Orders per converter').waitFor();

    const stored = (await server.request('GET', '/v1/metrics?limit=200', { key: boot.key })).body.data as any[];
    expect(stored.find((m) => m.key === 'load-time')).toMatchObject({
      kind: 'duration',
      unit: 'ms',
      higher_is_better: false,
      capping: { type: 'percentile', value: 0.99 },
    });
    expect(stored.find((m) => m.key === 'orders-per-conversion')).toMatchObject({
      kind: 'ratio',
      event_key: null,
      numerator_metric_id: ids.orders,
      denominator_metric_id: ids.converted,
    });
  });

  it('edits a metric’s direction and capping, and deletes an unused one but not one in use', async () => {
    const { page } = browser;
    // Metrics of its own (a count and a ratio over it), so the test runs alone and in any order.
    const itemsId = await createMetric(server, boot.key, { key: 'items', event_key: 'buy', kind: 'count' });
    await createMetric(server, boot.key, { key: 'items-per-conversion', kind: 'ratio', numerator_metric_id: itemsId, denominator_metric_id: ids.converted });
    await page.goto(`${server.url}/ui/metrics`);
    await page.getByRole('link', { name: 'items', exact: true }).click();
    await page.getByRole('heading', { name: 'Metric: items' }).waitFor();
    await page.getByLabel('Direction').selectOption('false');
    await page.getByLabel('Capping').selectOption('absolute');
    await page.getByLabel('Cap value').fill('5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('absolute 5').waitFor();
    const items = (await server.request('GET', `/v1/metrics/${itemsId}`, { key: boot.key })).body;
    expect(items).toMatchObject({ higher_is_better: false, capping: { type: 'absolute', value: 5 } });

    page.on('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete metric' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /used by metric "items-per-conversion"/ })
      .waitFor();
    expect((await server.request('GET', `/v1/metrics/${itemsId}`, { key: boot.key })).status).toBe(200);

    await page.goto(`${server.url}/ui/metrics/${ids.spare}`);
    await page.getByRole('heading', { name: 'Metric: Spare metric' }).waitFor();
    await page.getByRole('button', { name: 'Delete metric' }).click();
    await page.getByRole('heading', { name: 'Metrics', exact: true }).waitFor();
    expect((await server.request('GET', `/v1/metrics/${ids.spare}`, { key: boot.key })).status).toBe(404);
  });
});
