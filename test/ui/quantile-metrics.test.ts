import { describe, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// Quantile metrics in the admin UI (docs/ui.md, docs/metrics.md "Quantile metrics"): the metric
// form takes the percentile as people write it ("p95") and the level; the scorecard shows each
// variant's quantile with its interval beside the relative difference.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: quantile metrics', () => {
  const ui = useAdminUi({ jobs: false });

  it('creates a quantile metric from the form, and says so when the percentile is not one', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/metrics'));
    await page.getByLabel('Key', { exact: true }).fill('load_p95');
    await page.getByLabel('Name', { exact: true }).fill('Load time p95');
    await page.getByLabel('Event key').fill('page_load');
    await page.getByLabel('Kind').selectOption('quantile');
    await page.getByLabel('Aggregation').selectOption('mean');
    await page.getByLabel('Property path').fill('ms');
    await page.getByLabel('Percentile').fill('p100');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('alert').filter({ hasText: 'strictly between 0 and 100' }).waitFor();

    await page.getByLabel('Percentile').fill('p95');
    await page.getByLabel('Level').selectOption('unit');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('table', { name: 'Metrics' }).getByText('quantile p95 (unit)').waitFor();
    const stored = (await ui.server.request('GET', '/v1/metrics', { key: ui.boot.key })).body.data;
    expect(stored).toEqual([
      expect.objectContaining({ key: 'load_p95', kind: 'quantile', quantile: 0.95, quantile_level: 'unit', aggregation: 'mean', property_path: 'ms' }),
    ]);
  }, 240_000);

  it('shows each variant’s quantile on the scorecard', async () => {
    const metric = await createMetric(ui.server, ui.boot.key, {
      key: 'load_p90',
      name: 'Load p90',
      event_key: 'page_load',
      kind: 'quantile',
      quantile: 0.9,
      property_path: 'ms',
      unit: 'ms',
      higher_is_better: false,
    });
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'quantile-results',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: metric,
    });
    const units = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 40, treatment: 40 });
    const now = Date.now();
    const events = (['control', 'treatment'] as const).flatMap((variant) =>
      (units[variant] ?? []).flatMap((unit_id, i) =>
        [0, 1, 2].map((j) => ({
          event_key: 'page_load',
          unit_id,
          occurred_at: now,
          properties: { ms: 200 + ((i * 7 + j * 11) % 50) + (variant === 'treatment' ? 30 : 0) },
        })),
      ),
    );
    await sendEvents(ui.server, ui.boot.key, events);
    const snapshot = await compute(ui.server, ui.boot.key, experiment.id);
    const { page } = ui.browser;
    await page.goto(ui.at(`/experiments/${experiment.id}/results`));
    await page.getByTestId('scorecard').waitFor();
    await expect(page.getByTestId('scorecard-row-load_p90').innerText()).resolves.toContain('p90 of events');
    for (const variant of snapshot.per_variant) {
      const shown = await page.getByTestId(`quantile-load_p90-${variant.variant_key}`).innerText();
      expect(shown).toContain(`p90 ${Math.round(variant.quantile.value)}`);
      expect(shown).toContain('ms');
    }
    await expect(page.getByTestId('score-load_p90-treatment').getAttribute('data-reading')).resolves.toBe('worse');
    await screenshot(page, 'results-quantile-metric');
  }, 240_000);
});
