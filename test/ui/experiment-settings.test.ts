import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createExperiment, createMetric, TWO_ARMS } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// Issue #52 in Chromium: the experiment's settings in one form with one Save (one PATCH of the
// changed sections), an unsaved-changes line, Discard, and the server's 422 beside each field it
// names, at 1440 and at 390 px.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: one Save for the experiment’s settings', () => {
  const ui = useAdminUi();

  const read = async (id: string) => (await ui.server.request('GET', `/v1/experiments/${id}`, { key: ui.boot.key })).body;

  /** Counts the PATCH requests the page sends from now on. */
  function countPatches(page: Page): { count: () => number; stop: () => void } {
    let count = 0;
    const listener = (request: { method(): string }) => {
      if (request.method() === 'PATCH') count += 1;
    };
    page.on('request', listener);
    return { count: () => count, stop: () => page.off('request', listener) };
  }

  async function openEditor(page: Page, id: string) {
    await page.goto(ui.at(`/experiments/${id}`));
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByTestId('settings-form').waitFor();
    // The form is filled from the loaded experiment; typing before that would be overwritten.
    await expect.poll(() => page.getByLabel('Experiment name').inputValue()).not.toBe('');
  }

  it('saves changes to details, weights, metrics, rule, CUPED and auto-stop with one Save and one PATCH; a reload shows them all', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    const purchases = await createMetric(ui.server, ui.boot.key, { key: 'purchases', name: 'Purchases', event_key: 'buy', kind: 'binary' });
    const refunds = await createMetric(ui.server, ui.boot.key, { key: 'refunds', name: 'Refunds', event_key: 'refund', kind: 'binary' });
    const draft = await createExperiment(
      ui.server,
      ui.boot.key,
      { environment_id: ui.boot.environmentId, key: 'one-save', name: 'One save', variants: TWO_ARMS, primary_metric_id: null },
      false,
    );
    await openEditor(page, draft.id);
    const save = page.getByRole('button', { name: 'Save changes' });
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('No unsaved changes.');
    await expect(save.isDisabled()).resolves.toBe(true);
    // Exactly one Save button on the page, whatever the sections.
    await expect(page.getByRole('button', { name: /^Save/ }).count()).resolves.toBe(1);

    await page.getByLabel('Experiment name').fill('One save, renamed');
    await page.getByLabel('Weight of control (%)').fill('30');
    await page.getByLabel('Weight of treatment (%)').fill('60');
    await expect(page.getByTestId('weights-total').innerText()).resolves.toContain('must add up to 100%');
    await page.getByLabel('Weight of treatment (%)').fill('70');
    await page.getByLabel('Primary metric').selectOption(purchases);
    await page.getByRole('group', { name: 'Metrics' }).getByLabel('Refunds').check();
    await page.getByLabel('Method').selectOption('frequentist.sequential_msprt');
    await page.getByLabel('Threshold (%)').fill('99');
    await page.getByLabel('Use CUPED (adjust for each unit’s behaviour before its exposure)').check();
    await page.getByLabel('Lookback (days)').fill('10');
    await page.getByRole('switch', { name: 'Stop when the split breaks (SRM)' }).check();
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe(
      'Unsaved changes: details, weights, metrics, decision rule, variance reduction, auto-stop.',
    );
    await expect(page.locator('.settings-section[data-changed]').count()).resolves.toBe(6);
    await screenshot(page, 'experiment-settings-1440');

    const patches = countPatches(page);
    await save.click();
    await expect.poll(async () => (await read(draft.id)).name).toBe('One save, renamed');
    await expect.poll(() => page.getByTestId('unsaved').innerText()).toBe('All changes saved.');
    patches.stop();
    expect(patches.count()).toBe(1);
    expect(await read(draft.id)).toMatchObject({
      variants: [{ weight: 30 }, { weight: 70 }],
      primary_metric_id: purchases,
      guardrail_metric_ids: [refunds],
      decision_rule: { method: 'frequentist.sequential_msprt', posterior_threshold: 0.99 },
      variance_reduction: { method: 'cuped', lookback_days: 10 },
      auto_stop: { on_srm: true },
    });
    const audit = await ui.server.request('GET', `/v1/audit?target_id=${draft.id}&action=experiment.updated`, { key: ui.boot.key });
    expect(audit.body.data).toHaveLength(1);

    await page.reload();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await expect.poll(() => page.getByLabel('Experiment name').inputValue()).toBe('One save, renamed');
    await expect(page.getByLabel('Weight of treatment (%)').inputValue()).resolves.toBe('70');
    await expect(page.getByLabel('Primary metric').inputValue()).resolves.toBe(purchases);
    await expect(page.getByRole('group', { name: 'Metrics' }).getByLabel('Refunds').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Threshold (%)').inputValue()).resolves.toBe('99');
    await expect(page.getByLabel('Lookback (days)').inputValue()).resolves.toBe('10');
    await expect(page.getByRole('switch', { name: 'Stop when the split breaks (SRM)' }).isChecked()).resolves.toBe(true);
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('No unsaved changes.');
  });

  it('discards unsaved changes back to the saved experiment', async () => {
    const { page } = ui.browser;
    const draft = await createExperiment(
      ui.server,
      ui.boot.key,
      { environment_id: ui.boot.environmentId, key: 'discard', name: 'Discard me not', variants: TWO_ARMS },
      false,
    );
    await openEditor(page, draft.id);
    await page.getByLabel('Experiment name').fill('Something else');
    await page.getByLabel('Maximum duration (days)').fill('14');
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('Unsaved changes: details, decision rule.');
    await page.getByRole('button', { name: 'Discard changes' }).click();
    await expect(page.getByLabel('Experiment name').inputValue()).resolves.toBe('Discard me not');
    await expect(page.getByLabel('Maximum duration (days)').inputValue()).resolves.toBe('28');
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('No unsaved changes.');
    expect((await read(draft.id)).name).toBe('Discard me not');
    // Closing the form with unsaved changes asks first; dismissed, the changes stay.
    await page.getByLabel('Experiment name').fill('Something else again');
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Done editing' }).click();
    await expect(page.getByLabel('Experiment name').inputValue()).resolves.toBe('Something else again');
  });

  it('shows each field the server’s 422 names beside it and saves nothing, at 390 px with Save in reach', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 390, height: 844 });
    const running = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'refused',
      name: 'Refused',
      variants: TWO_ARMS,
    });
    await openEditor(page, running.id);
    await page.getByLabel('Experiment name').fill('Refused, renamed');
    await page.getByLabel('Dimensions').fill('a, b, c, d, e, f');
    await page.getByLabel('Maximum duration (days)').fill('4000');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const beside = (label: string) =>
      page
        .locator('.field-invalid')
        .filter({ has: page.getByLabel(label, { exact: true }) })
        .locator('.field-error');
    await expect(beside('Dimensions').innerText()).resolves.toBe('can hold at most 5');
    await expect(beside('Maximum duration (days)').innerText()).resolves.toMatch(/3650|3,650/);
    // The PATCH is all or nothing: the valid name was not saved either, and the form keeps every change.
    expect((await read(running.id)).name).toBe('Refused');
    await expect(page.getByLabel('Experiment name').inputValue()).resolves.toBe('Refused, renamed');
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('Unsaved changes: details, decision rule.');
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    expect(overflow).toBeLessThanOrEqual(0);
    // The bar stays at the bottom of the screen while the form's top is in view.
    await page.getByLabel('Experiment name').scrollIntoViewIfNeeded();
    const button = await page.getByRole('button', { name: 'Save changes' }).boundingBox();
    expect(button).not.toBeNull();
    expect((button?.x ?? 0) + (button?.width ?? 0)).toBeLessThanOrEqual(390);
    expect((button?.y ?? 0) + (button?.height ?? 0)).toBeLessThanOrEqual(844);
    await screenshot(page, 'experiment-settings-390');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('changes a running experiment’s tags and owner in the same form; a bad tag is named beside the field and saves nothing', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    const running = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'labels-edit',
      name: 'Labels edit',
      variants: TWO_ARMS,
      tags: ['growth'],
      owner: 'Ada',
    });
    await openEditor(page, running.id);
    await expect(page.getByLabel('Tags').inputValue()).resolves.toBe('growth');
    await expect(page.getByLabel('Owner').inputValue()).resolves.toBe('Ada');

    await page.getByLabel('Tags').fill('growth, Checkout');
    await page.getByLabel('Owner').fill('Grace');
    await expect(page.getByTestId('unsaved').innerText()).resolves.toBe('Unsaved changes: tags and owner.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await read(running.id)).owner).toEqual({ user_id: null, name: 'Grace' });
    expect((await read(running.id)).tags).toEqual(['growth', 'checkout']);

    await page.getByLabel('Tags').fill('growth, no!tag');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByLabel('Tags').getAttribute('aria-invalid')).toBe('true');
    expect((await read(running.id)).tags).toEqual(['growth', 'checkout']);
  });
});
