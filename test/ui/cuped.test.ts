import { describe, expect, it } from 'vitest';
import { createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { chromiumAvailable, screenshot } from './browser-support.js';
import { useSignedInUi } from './signed-in-ui.js';

// CUPED in the admin UI (docs/ui.md "What a person can do"): a toggle and lookback on the new-experiment
// form and on the experiment's editor, and the results page says CUPED is on and how much variance
// it removed. Each test starts from an experiment of its own, so any one of them runs alone.

const DAY = 24 * 60 * 60 * 1000;

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: CUPED toggle, lookback and the variance it removed', () => {
  let ordersId = '';

  const ui = useSignedInUi('Cuped Co', async ({ server, boot }) => {
    ordersId = await createMetric(server, boot.key, { key: 'orders', name: 'Orders', event_key: 'buy', kind: 'count' });
  });

  /** A running experiment on orders with CUPED at the lookback given, made through the API, its page open. */
  async function openCupedExperiment(key: string, lookbackDays: number): Promise<any> {
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key,
      name: 'Fewer steps',
      hypothesis: 'Fewer steps, more orders',
      primary_metric_id: ordersId,
      variance_reduction: { method: 'cuped', lookback_days: lookbackDays },
      variants: [
        { key: 'control', weight: 50 },
        { key: 'treatment', weight: 50 },
      ],
    });
    await ui.browser.page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    await ui.browser.page.getByRole('link', { name: 'View results' }).waitFor();
    return experiment;
  }

  it('creates an experiment with CUPED and a 21-day lookback from the form', async () => {
    const { page } = ui.browser;
    await page.goto(`${ui.server.url}/ui/experiments`);
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Key', { exact: true }).fill('cuped-ui');
    await page.getByLabel('Name', { exact: true }).fill('Fewer steps');
    await page.getByLabel('Hypothesis').fill('Fewer steps, more orders');
    await page.getByLabel('Primary metric').selectOption({ label: 'Orders (count)' });
    await page.getByLabel(/Use CUPED/).check();
    await page.getByLabel('Lookback (days)').fill('21');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('button', { name: 'Start experiment' }).click();
    await page.getByRole('link', { name: 'View results' }).waitFor();
    const experimentId = page.url().split('/').pop() ?? '';
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({ key: 'cuped-ui', status: 'running', variance_reduction: { method: 'cuped', lookback_days: 21 } });
    await page.getByText('CUPED, 21-day lookback').waitFor();
  });

  it('changes the lookback of the running experiment in its editor', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await openCupedExperiment('cuped-lookback', 21);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Lookback (days)').fill('7');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('CUPED, 7-day lookback').waitFor();
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body.variance_reduction).toEqual({ method: 'cuped', lookback_days: 7 });
  });

  it('says on the results page that CUPED is on and how much variance it removed', async () => {
    const experiment = await openCupedExperiment('cuped-results', 7);
    const experimentId = experiment.id as string;
    const units = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 40, treatment: 40 });
    const now = Date.now();
    // Each unit orders about as often after its exposure as in the two days before it.
    const events = (['control', 'treatment'] as const).flatMap((variant) =>
      (units[variant] ?? []).flatMap((unit_id, i) => {
        const habit = i % 5;
        const after = habit + (i % 2);
        return [
          ...Array.from({ length: habit }, () => ({ event_key: 'buy', unit_id, occurred_at: now - 2 * DAY })),
          ...Array.from({ length: after }, () => ({ event_key: 'buy', unit_id, occurred_at: now })),
        ];
      }),
    );
    await sendEvents(ui.server, ui.boot.key, events);
    const { page } = ui.browser;
    await page.getByRole('link', { name: 'View results' }).click();
    await page.getByRole('button', { name: 'Compute now' }).click();
    // The details of each metric are folded under the scorecard.
    await page.locator('.metric-details summary').first().click();
    const note = page.locator('.cuped-note').first();
    await note.waitFor();
    const snapshot = (await ui.server.request('GET', `/v1/experiments/${experimentId}/results`, { key: ui.boot.key })).body;
    const removed = (100 * snapshot.primary_metric.cuped.variance_reduction).toFixed(1);
    await expect(note.textContent()).resolves.toContain(`CUPED is on (7-day lookback): it removed ${removed}% of the variance`);
    expect(Number(removed)).toBeGreaterThan(50);
    await screenshot(page, 'results-cuped');
  });
});
