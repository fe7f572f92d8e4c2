import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// Secondary metrics in the admin UI (docs/ui.md, docs/statistics.md "Multiple testing"): the new
// experiment form takes secondary metrics and the correction; the scorecard lists the primary, then
// the secondaries, then the guardrails, each treatment's p-value beside its adjusted one.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: secondary metrics and the multiple-testing correction', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Goals Co');
    ids.bought = await createMetric(server, boot.key, { key: 'bought', name: 'Bought', event_key: 'buy', kind: 'binary' });
    ids.clicked = await createMetric(server, boot.key, { key: 'clicked', name: 'Clicked', event_key: 'click', kind: 'binary' });
    ids.errors = await createMetric(server, boot.key, { key: 'errors', name: 'Errors', event_key: 'app.error', kind: 'binary', higher_is_better: false });
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('creates an experiment with a secondary metric and Holm over goals and guardrails from the form', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/new`);
    await page.getByLabel('Key', { exact: true }).fill('goals-form');
    await page.getByLabel('Name', { exact: true }).fill('Goals form');
    await page.getByLabel('Hypothesis').fill('More goals, honestly read.');
    await page.getByLabel('Primary metric').selectOption({ label: 'Bought (binary)' });
    await page.getByLabel('Errors', { exact: true }).check();
    const goals = page.getByTestId('secondary-fields');
    // Neither the primary nor a guardrail is offered as a secondary metric.
    const secondaries = goals.getByLabel('Secondary metrics');
    await expect(secondaries.locator('option').allTextContents()).resolves.toEqual(['Clicked']);
    await secondaries.selectOption({ label: 'Clicked' });
    await goals.getByLabel('Multiple-testing correction').selectOption('holm');
    await goals.getByLabel('Corrected family').selectOption('goals_and_guardrails');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByTestId('experiment-summary').waitFor();
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const read = (await server.request('GET', `/v1/experiments/${id}`, { key: boot.key })).body;
    expect(read).toMatchObject({
      primary_metric_id: ids.bought,
      guardrail_metric_ids: [ids.errors],
      secondary_metric_ids: [ids.clicked],
      multiple_testing: { method: 'holm', scope: 'goals_and_guardrails' },
    });
  });

  it('shows the secondary between the primary and the guardrails, with raw and adjusted p-values', async () => {
    const experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'goals-results',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: ids.bought,
      secondary_metric_ids: [ids.clicked],
      guardrail_metric_ids: [ids.errors],
      decision_rule: { posterior_threshold: 0.95, min_sample_per_variant: 50 },
    });
    const units = await exposeExactly(server, boot.key, experiment, { control: 60, treatment: 60 });
    const now = Date.now();
    const events = (['control', 'treatment'] as const).flatMap((variant) =>
      (units[variant] ?? []).flatMap((unit_id, i) => [
        ...((variant === 'control' ? i % 5 === 0 : i % 2 === 0) ? [{ event_key: 'buy', unit_id, occurred_at: now }] : []),
        ...((variant === 'control' ? i % 4 === 0 : i % 3 === 0) ? [{ event_key: 'click', unit_id, occurred_at: now }] : []),
        ...(i % 10 === 0 ? [{ event_key: 'app.error', unit_id, occurred_at: now }] : []),
      ]),
    );
    await sendEvents(server, boot.key, events);
    const snapshot = await compute(server, boot.key, experiment.id);
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${experiment.id}/results`);
    await page.getByTestId('scorecard').waitFor();
    const rows = await page
      .getByTestId('scorecard')
      .locator('tbody tr')
      .evaluateAll((list) => list.map((row) => row.getAttribute('data-testid')));
    expect(rows).toEqual(['scorecard-row-bought', 'scorecard-row-clicked', 'scorecard-row-errors']);
    await expect(page.getByTestId('scorecard-row-clicked').innerText()).resolves.toContain('Secondary');
    await expect(page.getByTestId('correction-note').innerText()).resolves.toMatch(/adjusted by Benjamini-Hochberg over the 2 comparisons of the goals/);
    const adjusted = snapshot.secondary_metrics[0].per_variant[1].effect.adjusted_p_value as number;
    await expect(page.getByTestId('adjusted-clicked-treatment').innerText()).resolves.toContain(`adjusted = ${adjusted.toFixed(4)}`);
    await expect(page.getByTestId('adjusted-errors-treatment').innerText()).resolves.toContain('not in the corrected family');
    await screenshot(page, 'results-secondary-metrics');
  });
});
