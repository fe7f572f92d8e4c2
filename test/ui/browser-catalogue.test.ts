import { describe, expect, it } from 'vitest';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// The admin UI's catalogue pages in Chromium: segments, environments, API keys, templates,
// webhook sources and leads, each created, changed and checked through the API. The experiment
// pages are in browser.test.ts. Each test sets up what it needs, so any one of them runs alone.

describe.skipIf(!chromiumAvailable())('admin UI catalogue pages in Chromium', () => {
  const ui = useAdminUi();

  it('creates a segment from a JSON rule, says what is wrong with a bad one, and deletes it', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/experiments'));
    await page.getByRole('link', { name: 'Segments' }).click();
    await page.getByRole('heading', { name: 'Segments', exact: true }).waitFor();
    await page.getByLabel('Key', { exact: true }).fill('dach');
    await page.getByLabel('Name', { exact: true }).fill('DACH customers');
    await page.getByRole('button', { name: 'Edit as JSON' }).click();
    await page.getByLabel('Rule (JSON)').fill('{"attribute": "country", "op": "in", "value": ["DE", "AT"');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page.getByText('The rule is not valid JSON').waitFor();
    await page.getByLabel('Rule (JSON)').fill('{"attribute": "country", "op": "like", "value": "D%"}');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page
      .locator('.rule-builder .field-error')
      .getByText(/unknown op 'like'/)
      .waitFor();
    await page.getByLabel('Rule (JSON)').fill('{"attribute": "country", "op": "in", "value": ["DE", "AT", "CH"]}');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page.getByRole('table', { name: 'Segments' }).getByText('DACH customers').waitFor();
    await screenshot(page, '09b-segments');
    const stored = (await ui.server.request('GET', '/v1/segments', { key: ui.boot.key })).body.data;
    expect(stored).toEqual([expect.objectContaining({ key: 'dach', rule: { attribute: 'country', op: 'in', value: ['DE', 'AT', 'CH'] } })]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete segment dach' }).click();
    await page.getByText('No segments yet.').waitFor();
    expect((await ui.server.request('GET', '/v1/segments', { key: ui.boot.key })).body.data).toEqual([]);
  });

  it('creates an environment, and names the problem with a taken slug', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/experiments'));
    await page.getByRole('link', { name: 'Environments' }).click();
    await page.getByRole('heading', { name: 'Environments', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Staging');
    await page.getByLabel('Slug').fill('staging');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('table', { name: 'Environments' }).getByRole('cell', { name: 'Staging', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Staging again');
    await page.getByLabel('Slug').fill('staging');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /staging/ })
      .waitFor();
    const stored = (await ui.server.request('GET', '/v1/environments', { key: ui.boot.key })).body.data.map((e: { slug: string }) => e.slug);
    expect(stored.filter((slug: string) => slug === 'staging')).toHaveLength(1);
  });

  it('creates an API key and shows its secret once', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/api-keys'));
    await page.getByLabel('Name', { exact: true }).fill('checkout-service');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('secret').textContent();
    expect(secret).toMatch(/^vd_srv_all_/);
    await screenshot(page, '10-api-keys');
  });

  it('edits, freezes and renders a template', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/templates'));
    await page.getByLabel('Name', { exact: true }).fill('Offer');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByRole('button', { name: 'Freeze as next version' }).click();
    await page.getByRole('button', { name: 'v1' }).waitFor();
    await page.getByRole('button', { name: 'Render' }).click();
    await page.getByRole('link', { name: 'Download pdf' }).waitFor({ timeout: 30_000 });
    await screenshot(page, '13-template');
    const templateId = page.url().split('/').pop() ?? '';

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete template' }).click();
    await page.getByRole('heading', { name: 'Templates' }).waitFor();
    expect((await ui.server.request('GET', `/v1/templates/${templateId}`, { key: ui.boot.key })).status).toBe(404);
    // Its frozen version stays readable for the renders that pinned it.
    expect((await ui.server.request('GET', `/v1/templates/${templateId}/versions/v1`, { key: ui.boot.key })).status).toBe(200);
  });

  it('creates a webhook source (secret shown once), disables it and lists its deliveries', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/webhook-sources'));
    await page.getByLabel('Slug').fill('shop');
    await page.getByLabel('Name', { exact: true }).fill('Shop backend');
    await page.getByRole('button', { name: 'Create source' }).click();
    expect(await page.getByTestId('secret').textContent()).toMatch(/\S{20,}/);
    await page.getByRole('link', { name: 'Shop backend' }).click();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await screenshot(page, '16-webhook-source');
  });

  it('creates a lead and changes its status', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/leads'));
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Create lead' }).click();
    await page.getByLabel('Status of Ada Lovelace').fill('contacted');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).and(page.locator(':disabled')).waitFor();
    const leads = await ui.server.request('GET', '/v1/leads', { key: ui.boot.key });
    expect(leads.body.data[0]).toMatchObject({ name: 'Ada Lovelace', status: 'contacted' });
    await screenshot(page, '15-leads');
  });
});
