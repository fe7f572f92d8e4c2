import { describe, expect, it } from 'vitest';
import { createExperiment, TWO_ARMS } from '../analysis/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable } from './browser-support.js';

// Issue #52 in Chromium, the experiment list at scale: search by name or key with the status
// filter and the order kept in the address, and duplicating an experiment into a new draft.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: the experiment list at scale (#52)', () => {
  const ui = useAdminUi();

  it('searches by name or key, filters by status, orders newest first, and keeps it all in the address', async () => {
    const { page } = ui.browser;
    const environment = ui.boot.environmentId;
    await createExperiment(
      ui.server,
      ui.boot.key,
      { environment_id: environment, key: 'checkout-button', name: 'Checkout button colour', variants: TWO_ARMS },
      false,
    );
    await createExperiment(ui.server, ui.boot.key, { environment_id: environment, key: 'checkout-copy', name: 'One-page checkout', variants: TWO_ARMS });
    await createExperiment(ui.server, ui.boot.key, { environment_id: environment, key: 'pricing', name: 'Pricing page', variants: TWO_ARMS }, false);
    await page.goto(ui.at('/experiments'));
    const names = () => page.getByRole('table', { name: 'Experiments' }).locator('tbody tr td:first-child > a').allInnerTexts();
    await expect.poll(names).toEqual(['Checkout button colour', 'One-page checkout', 'Pricing page']);

    const find = page.getByRole('search', { name: 'Find experiments' });
    await find.getByLabel('Search').fill('CHECKOUT');
    await find.getByRole('button', { name: 'Search' }).click();
    await expect.poll(names).toEqual(['Checkout button colour', 'One-page checkout']);
    await find.getByLabel('Status').selectOption('running');
    await expect.poll(names).toEqual(['One-page checkout']);
    expect(new URL(page.url()).search).toBe('?status=running&q=CHECKOUT');
    await find.getByLabel('Status').selectOption('');
    await find.getByLabel('Order').selectOption('newest');
    await expect.poll(names).toEqual(['One-page checkout', 'Checkout button colour']);
    await page.reload();
    await expect.poll(names).toEqual(['One-page checkout', 'Checkout button colour']);
    await expect(find.getByLabel('Search').inputValue()).resolves.toBe('CHECKOUT');
    await find.getByLabel('Search').fill('no such test');
    await find.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No experiments match “no such test”.').waitFor();
  });

  it('duplicates an experiment into a new draft with a new key and name', async () => {
    const { page } = ui.browser;
    const list = await ui.server.request('GET', '/v1/experiments?q=checkout-copy', { key: ui.boot.key });
    const source = list.body.data[0];
    await page.goto(ui.at(`/experiments/${source.id}`));
    await page.getByRole('button', { name: 'Duplicate' }).click();
    const form = page.getByRole('form', { name: 'Duplicate as a new draft' });
    await expect(form.getByLabel('New key').inputValue()).resolves.toBe('checkout-copy-copy');
    await expect(form.getByLabel('New name').inputValue()).resolves.toBe('Copy of One-page checkout');
    // A taken key is answered beside the field and creates nothing.
    await form.getByLabel('New key').fill('pricing');
    await form.getByRole('button', { name: 'Create the copy' }).click();
    await form.getByRole('alert').first().waitFor();
    await form.getByLabel('New key').fill('checkout-copy-winter');
    await form.getByLabel('New name').fill('One-page checkout, winter');
    await form.getByRole('button', { name: 'Create the copy' }).click();
    await page.getByRole('heading', { name: /One-page checkout, winter/ }).waitFor();
    const copy = (await ui.server.request('GET', '/v1/experiments?q=winter', { key: ui.boot.key })).body.data[0];
    expect(copy).toMatchObject({ key: 'checkout-copy-winter', status: 'draft', hypothesis: source.hypothesis });
    expect(new URL(page.url()).pathname).toBe(`/ui/experiments/${copy.id}`);
  });
});
