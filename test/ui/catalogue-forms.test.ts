import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, signIn, type Browser } from './browser-support.js';

// The create and settings forms that the main browser walk-through does not use: metrics,
// mutex groups and the task-tool status mapping. Each is checked through the API afterwards.

describe.skipIf(!chromiumAvailable())('admin UI forms in Chromium: metrics, mutex groups, status mapping', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Forms Co');
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('creates a revenue metric, and names the problem with a taken key', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Metrics' }).click();
    await page.getByText('No metrics yet.').waitFor();
    await page.getByLabel('Key', { exact: true }).fill('revenue');
    await page.getByLabel('Name', { exact: true }).fill('Revenue per user');
    await page.getByLabel('Event key').fill('purchase');
    await page.getByLabel('Kind').selectOption('revenue');
    await page.getByLabel('Aggregation').selectOption('sum');
    await page.getByLabel('Property path').fill('amount');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('table', { name: 'Metrics' }).getByText('Revenue per user').waitFor();
    // The form is blank again after a create.
    await expect(page.getByLabel('Key', { exact: true }).inputValue()).resolves.toBe('');

    await page.getByLabel('Key', { exact: true }).fill('revenue');
    await page.getByLabel('Name', { exact: true }).fill('Revenue again');
    await page.getByLabel('Event key').fill('purchase');
    await page.getByRole('button', { name: 'Create metric' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /revenue/ })
      .waitFor();

    const stored = (await server.request('GET', '/v1/metrics', { key: boot.key })).body.data;
    expect(stored).toEqual([expect.objectContaining({ key: 'revenue', kind: 'revenue', aggregation: 'sum', property_path: 'amount', event_key: 'purchase' })]);
  });

  it('creates a mutex group', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Mutex groups' }).click();
    await page.getByLabel('Key', { exact: true }).fill('checkout-tests');
    await page.getByLabel('Name', { exact: true }).fill('Checkout tests');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('table', { name: 'Mutex groups' }).getByRole('cell', { name: 'Checkout tests', exact: true }).waitFor();
    const stored = (await server.request('GET', '/v1/mutex-groups', { key: boot.key })).body.data;
    expect(stored).toEqual([expect.objectContaining({ key: 'checkout-tests', name: 'Checkout tests', experiment_count: 0 })]);
  });

  it('saves the task-tool status mapping, and refuses text that is not JSON without sending it', async () => {
    const { page } = browser;
    const puts: string[] = [];
    const countPut = (request: { method(): string; url(): string }) => {
      if (request.method() === 'PUT' && request.url().endsWith('/v1/task-tool/settings')) puts.push(request.url());
    };
    page.on('request', countPut);
    await page.getByRole('link', { name: 'Leads' }).click();
    const save = page.getByRole('button', { name: 'Save mapping' });
    const box = page.getByLabel('Mapping (JSON object)');
    await expect(save.isDisabled()).resolves.toBe(true);

    await box.fill('{"in progress": "contacted"');
    await save.click();
    await page.getByRole('alert').filter({ hasText: 'The mapping is not valid JSON.' }).waitFor();
    expect(puts).toEqual([]);

    const saved = page.waitForResponse((response) => response.request().method() === 'PUT' && response.url().endsWith('/v1/task-tool/settings'));
    await box.fill('{"in progress": "contacted", "won": "won"}');
    await save.click();
    expect((await saved).status()).toBe(200);
    // After the save the box shows the stored mapping as the server returns it, and nothing is left to save.
    await expect.poll(() => box.inputValue()).toBe(JSON.stringify({ 'in progress': 'contacted', won: 'won' }, null, 2));
    await expect(save.isDisabled()).resolves.toBe(true);
    page.off('request', countPut);
    const after = (await server.request('GET', '/v1/task-tool/settings', { key: boot.key })).body.status_mapping;
    expect(after).toEqual({ 'in progress': 'contacted', won: 'won' });
    expect(puts).toHaveLength(1);
  });
});
