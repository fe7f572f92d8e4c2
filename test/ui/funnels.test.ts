import { describe, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents, HOUR, DAY } from '../analysis/support.js';
import { ManualClock } from '../support/clock.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot, signIn } from './browser-support.js';

// Funnel and retention metrics in the admin UI (docs/metrics.md "Funnel metrics", "Retention
// metrics"): the metric form's steps editor, window and retention days; the scorecard rows, the
// units still in their retention window, and a funnel chart per variant with each step's share.

const T0 = Date.UTC(2034, 5, 1, 9);

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: funnel and retention metrics', () => {
  const clock = new ManualClock(T0);
  const ui = useAdminUi({ clock, jobs: false });

  it('creates a funnel with a step condition and a retention metric from the form', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/metrics'));
    await page.getByLabel('Key', { exact: true }).fill('checkout-funnel');
    await page.getByLabel('Name', { exact: true }).fill('Checkout funnel');
    await page.getByLabel('Kind').selectOption('funnel');
    await page.getByLabel('Step 1 event key').fill('view');
    await page.getByLabel('Step 2 event key').fill('cart');
    await page.getByRole('button', { name: 'Add a step' }).click();
    await page.getByLabel('Step 3 event key').fill('buy');
    await page.getByLabel('Step 3 property (optional)').fill('amount');
    await page.getByLabel('Step 3 condition').selectOption('gte');
    await page.getByLabel('Step 3 value').fill('10');
    await page.getByLabel('Funnel window (days)').fill('2');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('link', { name: 'Checkout funnel' }).waitFor();

    await page.getByLabel('Key', { exact: true }).fill('week-two');
    await page.getByLabel('Name', { exact: true }).fill('Week two');
    await page.getByLabel('Kind').selectOption('retention');
    await page.getByLabel('Retention from (days)').fill('7');
    await page.getByLabel('Retention to (days)').fill('14');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('link', { name: 'Week two' }).waitFor();

    const metrics = (await ui.server.request('GET', '/v1/metrics', { key: ui.boot.key })).body.data;
    expect(metrics.find((metric: any) => metric.key === 'checkout-funnel')).toMatchObject({
      kind: 'funnel',
      window: 'P2D',
      steps: [{ event_key: 'view' }, { event_key: 'cart' }, { event_key: 'buy', where: { property_path: 'amount', op: 'gte', value: 10 } }],
    });
    expect(metrics.find((metric: any) => metric.key === 'week-two')).toMatchObject({
      kind: 'retention',
      event_key: null,
      retention: { from: 'P7D', to: 'P14D' },
    });
  }, 240_000);

  it('shows the scorecard rows, the pending retention units and a funnel chart per variant', async () => {
    const funnel = await createMetric(ui.server, ui.boot.key, {
      key: 'signup-funnel',
      name: 'Sign-up funnel',
      kind: 'funnel',
      steps: [{ event_key: 'visit' }, { event_key: 'form' }, { event_key: 'signup' }],
      window: 'P1D',
    });
    const back = await createMetric(ui.server, ui.boot.key, { key: 'came-back', name: 'Came back', kind: 'retention', retention: { from: 'PT1H', to: 'P2D' } });
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'funnel-results',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: funnel,
      guardrail_metric_ids: [back],
    });
    const first = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 20, treatment: 20 }, 'early');
    clock.set(T0 + 3 * DAY);
    const late = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 5, treatment: 5 }, 'late');
    const events = (['control', 'treatment'] as const).flatMap((variant) =>
      (first[variant] ?? []).flatMap((unit_id, i) => {
        const reached = variant === 'control' ? [20, 12, 4] : [20, 15, 9];
        const keys = ['visit', 'form', 'signup'].filter((_, step) => i < (reached[step] as number));
        return [
          ...keys.map((event_key, step) => ({ event_key, unit_id, occurred_at: T0 + (step + 1) * HOUR })),
          ...(i % 2 === 0 ? [{ event_key: 'ping', unit_id, occurred_at: T0 + DAY }] : []),
        ];
      }),
    );
    await sendEvents(ui.server, ui.boot.key, events);
    const snapshot = await compute(ui.server, ui.boot.key, experiment.id);
    expect(snapshot.per_variant.map((variant: any) => variant.conversions)).toEqual([4, 9]);
    expect(late.control).toHaveLength(5);

    const { page } = ui.browser;
    // Three days on, the session of the first sign-in has lapsed.
    await signIn(page, ui.server.url, ui.boot.key);
    await page.goto(ui.at(`/experiments/${experiment.id}/results`));
    await page.getByTestId('scorecard').waitFor();
    const rows = await page
      .getByTestId('scorecard')
      .locator('tbody tr')
      .evaluateAll((list) => list.map((row) => row.getAttribute('data-testid')));
    expect(rows).toEqual(['scorecard-row-signup-funnel', 'scorecard-row-came-back']);
    await expect(page.getByTestId('scorecard-row-signup-funnel').innerText()).resolves.toContain('%');
    await expect(page.getByTestId('retention-pending-came-back').innerText()).resolves.toContain('10 units whose retention window has not ended');
    const funnelSection = page.getByTestId('funnel-signup-funnel');
    for (const [variant, reached] of [
      ['control', [20, 12, 4]],
      ['treatment', [20, 15, 9]],
    ] as const) {
      const chart = funnelSection.getByTestId(`funnel-chart-${variant}`);
      await expect(chart.locator('rect.funnel-bar').count()).resolves.toBe(3);
      const label = (await chart.getAttribute('aria-label')) ?? '';
      const units = 25;
      for (const [step, count] of reached.entries()) {
        expect(label).toContain(`${['visit', 'form', 'signup'][step]}: ${count} units, ${((100 * count) / units).toFixed(1)}% of all`);
      }
    }
    await screenshot(page, 'results-funnel');
  }, 240_000);
});
