import { describe, expect, it } from 'vitest';
import { createExperiment, TWO_ARMS } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable } from './browser-support.js';

// Issue #52 in Chromium, the experiment list at scale: tags and owners on the list, each a filter
// kept in the address as removable chips; experiment templates saved from an experiment, and a new
// experiment started from one.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: tags, owners and experiment templates (#52)', () => {
  const ui = useAdminUi();

  it('shows tags and owners, narrows the list by a tag or an owner, and keeps the filters in the address as chips', async () => {
    const { page } = ui.browser;
    const environment = ui.boot.environmentId;
    const make = (key: string, name: string, extra: Record<string, unknown>) =>
      createExperiment(ui.server, ui.boot.key, { environment_id: environment, key, name, variants: TWO_ARMS, ...extra }, false);
    await make('banner', 'Holiday banner', { tags: ['growth'], owner: 'Dana Scully' });
    await make('checkout-steps', 'Three-step checkout', { tags: ['growth', 'checkout'], owner: 'Fox Mulder' });
    await make('pricing-copy', 'Pricing copy', { tags: ['pricing'], owner: 'Dana Scully' });
    await page.goto(ui.at('/experiments'));
    const names = () => page.getByRole('table', { name: 'Experiments' }).locator('tbody tr td:first-child > a').allInnerTexts();
    await expect.poll(names).toEqual(['Holiday banner', 'Three-step checkout', 'Pricing copy']);
    const row = page.getByTestId('experiment-row-checkout-steps');
    await expect(row.getByRole('list', { name: 'Tags of Three-step checkout' }).innerText()).resolves.toMatch(/growth\s+checkout/);
    await expect(row.getByRole('button', { name: 'Fox Mulder' }).isVisible()).resolves.toBe(true);

    await row.getByRole('button', { name: 'growth' }).click();
    await expect.poll(names).toEqual(['Holiday banner', 'Three-step checkout']);
    await page.getByTestId('experiment-row-checkout-steps').getByRole('button', { name: 'checkout' }).click();
    await expect.poll(names).toEqual(['Three-step checkout']);
    expect(new URL(page.url()).searchParams.get('tag')).toBe('growth,checkout');
    const chips = page.getByRole('list', { name: 'Filters in effect' });
    await chips.getByRole('button', { name: 'Remove the tag filter growth' }).click();
    await expect.poll(names).toEqual(['Three-step checkout']);
    await chips.getByRole('button', { name: 'Remove the tag filter checkout' }).click();
    await expect.poll(names).toEqual(['Holiday banner', 'Three-step checkout', 'Pricing copy']);

    await page.getByTestId('experiment-row-banner').getByRole('button', { name: 'Dana Scully' }).click();
    await expect.poll(names).toEqual(['Holiday banner', 'Pricing copy']);
    await expect(page.getByRole('list', { name: 'Filters in effect' }).innerText()).resolves.toContain('owner: Dana Scully');
    await page.reload();
    await expect.poll(names).toEqual(['Holiday banner', 'Pricing copy']);
    const find = page.getByRole('search', { name: 'Find experiments' });
    await expect(find.getByLabel('Owner', { exact: true }).inputValue()).resolves.toBe('Dana Scully');
    await find.getByLabel('Owner', { exact: true }).fill('fox mulder');
    await find.getByRole('button', { name: 'Search' }).click();
    await expect.poll(names).toEqual(['Three-step checkout']);
    await page.getByRole('button', { name: 'Remove the owner filter' }).click();
    await expect.poll(names).toEqual(['Holiday banner', 'Three-step checkout', 'Pricing copy']);

    // Most recently changed first: retagging the oldest brings it to the top.
    const banner = (await ui.server.request('GET', '/v1/experiments?q=banner', { key: ui.boot.key })).body.data[0];
    await ui.server.request('PATCH', `/v1/experiments/${banner.id}`, { key: ui.boot.key, body: { tags: ['growth', 'holiday'] } });
    await find.getByLabel('Order').selectOption('updated');
    await expect.poll(names).toEqual(['Holiday banner', 'Pricing copy', 'Three-step checkout']);
    expect(new URL(page.url()).searchParams.get('order')).toBe('updated');
  });

  it('saves an experiment as a template, starts a new experiment from it, and deletes it', async () => {
    const { page } = ui.browser;
    const metric = await ui.server.request('POST', '/v1/metrics', {
      key: ui.boot.key,
      body: { key: 'checkout.done', name: 'Checkout completed', event_key: 'checkout.done', kind: 'binary' },
    });
    expect(metric.status, metric.text).toBe(201);
    await createExperiment(
      ui.server,
      ui.boot.key,
      {
        environment_id: ui.boot.environmentId,
        key: 'three-arms',
        name: 'Three arms',
        unit_type: 'account',
        primary_metric_id: metric.body.id,
        tags: ['checkout'],
        variants: [
          { key: 'control', weight: 34, is_control: true },
          { key: 'short', weight: 33 },
          { key: 'shorter', weight: 33 },
        ],
      },
      false,
    );
    await page.goto(ui.at('/experiment-templates'));
    await page.getByText('No templates yet.').waitFor();
    const form = page.getByRole('form', { name: 'Save an experiment as a template' });
    await form.getByLabel('Experiment').selectOption({ label: 'Three arms' });
    await form.getByLabel('Template name').fill('Checkout, three arms');
    await form.getByRole('button', { name: 'Save as template' }).click();
    const row = page.getByTestId('template-row');
    await expect(row.innerText()).resolves.toContain('primary metric: Checkout completed');
    await expect(row.innerText()).resolves.toContain('control 34%, short 33%, shorter 33%');

    await page.getByRole('link', { name: 'New experiment from Checkout, three arms' }).click();
    await expect.poll(() => page.getByLabel('Variant 3 key').inputValue()).toBe('shorter');
    await expect(page.getByLabel('Start from template').inputValue()).resolves.not.toBe('');
    await expect(page.getByLabel('Unit type').inputValue()).resolves.toBe('account');
    await expect(page.getByLabel('Tags').inputValue()).resolves.toBe('checkout');
    await page.getByLabel('Tags').fill('checkout, winter');
    await page.getByLabel('Owner').fill('Dana Scully');
    await page.getByLabel('Key', { exact: true }).fill('three-arms-winter');
    await page.getByLabel('Name', { exact: true }).fill('Three arms, winter');
    await page.getByLabel('Hypothesis').fill('Shorter still converts better in winter');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('heading', { name: /Three arms, winter/ }).waitFor();
    const created = (await ui.server.request('GET', '/v1/experiments?q=three-arms-winter', { key: ui.boot.key })).body.data[0];
    expect(created).toMatchObject({
      unit_type: 'account',
      primary_metric_id: metric.body.id,
      tags: ['checkout', 'winter'],
      owner: { user_id: null, name: 'Dana Scully' },
    });
    expect(created.variants.map((v: { key: string; weight: number }) => [v.key, v.weight])).toEqual([
      ['control', 34],
      ['short', 33],
      ['shorter', 33],
    ]);
    const audit = await ui.server.request('GET', `/v1/audit?target_id=${created.id}`, { key: ui.boot.key });
    expect(audit.body.data[0].payload.template).toEqual({ id: expect.any(String), name: 'Checkout, three arms' });

    await page.goto(ui.at('/experiment-templates'));
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete the template Checkout, three arms' }).click();
    await page.getByText('No templates yet.').waitFor();
    expect((await ui.server.request('GET', '/v1/experiment-templates', { key: ui.boot.key })).body.data).toEqual([]);
  });
});
