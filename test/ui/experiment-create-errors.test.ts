import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createMetric } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// Issue #52 in Chromium: the new-experiment form shows the server's 422 beside each field its
// pointer names in the decision rule, allocation (bandit) and CUPED sections, as the settings form
// does, creates nothing, and keeps what was typed; at 1440 and at 390 px.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: the new-experiment form names each refused field', () => {
  const ui = useAdminUi();

  async function experimentByKey(key: string) {
    const list = await ui.server.request('GET', '/v1/experiments?limit=200', { key: ui.boot.key });
    return (list.body.data as Array<{ key: string }>).find((experiment) => experiment.key === key);
  }

  async function openForm(page: Page, key: string) {
    await page.goto(ui.at('/experiments/new'));
    await page.getByLabel('Threshold (%)').waitFor();
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByLabel('Name', { exact: true }).fill(`Experiment ${key}`);
    await page.getByLabel('Hypothesis').fill('It helps.');
  }

  /** The error shown beside the field with this label (the field's own `.field-invalid` wrapper). */
  const beside = (page: Page, label: string) =>
    page
      .locator('.field-invalid')
      .filter({ has: page.getByLabel(label, { exact: true }) })
      .locator('.field-error');

  const noOverflow = async (page: Page) =>
    expect(Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'))).toBeLessThanOrEqual(0);

  it('puts the rule’s, the bandit’s and CUPED’s refused numbers beside their fields at 1440 px; a corrected form creates', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await createMetric(ui.server, ui.boot.key, { key: 'paid', name: 'Paid', event_key: 'pay', kind: 'binary' });
    await openForm(page, 'refused-numbers');
    await page.getByLabel('Maximum duration (days)').fill('4000');
    await page.getByLabel('Bandit: send more new units to the variants doing best').check();
    await page.getByLabel('Update every (minutes)').fill('5');
    await page.getByLabel('Use CUPED (adjust for each unit’s behaviour before its exposure)').check();
    await page.getByLabel('Lookback (days)').fill('');
    await page.getByRole('button', { name: 'Create experiment' }).click();

    await expect(beside(page, 'Maximum duration (days)').innerText()).resolves.toBe('must be at most 3650');
    await expect(beside(page, 'Update every (minutes)').innerText()).resolves.toBe('must be at least 15');
    await expect(beside(page, 'Lookback (days)').innerText()).resolves.toBe('must be at least 1');
    // Fields the server did not name are not marked.
    await expect(
      page
        .locator('.field-invalid')
        .filter({ has: page.getByLabel('Threshold (%)') })
        .count(),
    ).resolves.toBe(0);
    await expect(page.locator('main').innerText()).resolves.not.toMatch(/must be <=|must be >=/);
    expect(await experimentByKey('refused-numbers')).toBeUndefined();
    await noOverflow(page);
    await screenshot(page, 'experiment-create-errors-1440');

    // What was typed stays for another try; corrected, the same form creates the experiment.
    await expect(page.getByLabel('Key', { exact: true }).inputValue()).resolves.toBe('refused-numbers');
    await page.getByLabel('Maximum duration (days)').fill('30');
    await page.getByLabel('Update every (minutes)').fill('60');
    await page.getByLabel('Lookback (days)').fill('7');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByTestId('experiment-summary').waitFor();
    const created = (await ui.server.request('GET', '/v1/experiments?limit=200', { key: ui.boot.key })).body.data.find(
      (experiment: { key: string }) => experiment.key === 'refused-numbers',
    );
    expect(created).toMatchObject({
      decision_rule: { max_duration_days: 30 },
      allocation: { type: 'bandit', update_every_minutes: 60 },
      variance_reduction: { method: 'cuped', lookback_days: 7 },
    });
  });

  it('names a bandit’s floor beside its field in percent and a missing primary metric in the metrics section at 390 px', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await openForm(page, 'refused-floor');
    await page.getByLabel('Primary metric').selectOption('');
    await page.getByLabel('Bandit: send more new units to the variants doing best').check();
    await page.getByLabel('Weight floor (%)').fill('60');
    await page.getByRole('button', { name: 'Create experiment' }).click();

    const floor = beside(page, 'Weight floor (%)');
    await expect(floor.innerText()).resolves.toContain('(50%) for 2 variants, got 0.6 (60%)');
    const metrics = page.getByRole('group', { name: 'Metrics' });
    await expect(metrics.locator('.field-error').innerText()).resolves.toContain('a bandit needs a primary metric');
    expect(await experimentByKey('refused-floor')).toBeUndefined();
    await expect(page.getByLabel('Weight floor (%)').inputValue()).resolves.toBe('60');
    // The message beside the field is on screen without scrolling sideways.
    await floor.scrollIntoViewIfNeeded();
    const box = await floor.boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
    await noOverflow(page);
    await screenshot(page, 'experiment-create-errors-390');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
