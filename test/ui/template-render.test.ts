import { describe, expect, it } from 'vitest';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// The render form generated from a frozen version's fields_schema (issue #33, "template render
// data as a form"): a field per merge field, a fieldset per object, a list per array; the render's
// output shown on the page; the server's 422 on /data shown beside the field its pointer names.

const BODY = [
  '<h1>Offer for {{customer.name}}</h1>',
  '<p>Total: {{amount}}</p>',
  '<ul>{{#each items}}<li>{{title}} x {{qty}}</li>{{/each}}</ul>',
  '{{#if vip}}<p>Thank you for being a VIP, {{nickname}}</p>{{/if}}',
].join('\n');

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: the template render form from the fields schema', () => {
  const ui = useAdminUi();
  const consoleErrors: string[] = [];

  async function frozenTemplate(name: string): Promise<string> {
    const created = await ui.server.request('POST', '/v1/templates', { key: ui.boot.key, body: { name, body: BODY } });
    expect(created.status, created.text).toBe(201);
    const frozen = await ui.server.request('POST', `/v1/templates/${created.body.id}/versions`, { key: ui.boot.key });
    expect(frozen.status, frozen.text).toBe(201);
    return created.body.id as string;
  }

  it('renders what the form’s fields say and shows the output', async () => {
    const { page } = ui.browser;
    page.on('console', (message) => {
      // The 422 the next test provokes is logged by Chromium as a failed load; anything else counts.
      if (message.type() === 'error' && !/status of 422/.test(message.text())) consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const id = await frozenTemplate('Offer letter');
    await page.goto(ui.at(`/templates/${id}`));
    const form = page.getByTestId('schema-form');
    await form.waitFor();
    // One input per merge field, grouped as the schema nests them.
    const customer = form.locator('fieldset', { has: page.locator('legend', { hasText: /^customer$/ }) });
    await customer.getByLabel('name', { exact: true }).fill('Ada Lovelace');
    await form.getByLabel('amount', { exact: true }).fill('42 EUR');
    const items = form.locator('fieldset.schema-array', { has: page.locator('legend', { hasText: /^items$/ }) });
    await items.getByLabel('title', { exact: true }).fill('Notebook');
    await items.getByLabel('qty', { exact: true }).fill('3');
    await items.getByRole('button', { name: 'Add items' }).click();
    await items.getByLabel('title', { exact: true }).nth(1).fill('Pen');
    await items.getByLabel('qty', { exact: true }).nth(1).fill('12');
    await form.getByLabel('vip (optional)').fill('yes');
    await form.getByLabel('nickname (optional)').fill('Ada');
    await page.getByRole('checkbox', { name: 'pdf' }).uncheck();
    await page.getByRole('button', { name: 'Render', exact: true }).click();
    await page.getByRole('link', { name: 'Download html' }).waitFor({ timeout: 30_000 });
    const preview = page.frameLocator('iframe[title="Rendered html"]').locator('body');
    await expect(preview.innerText()).resolves.toMatch(/Offer for Ada Lovelace\s+Total: 42 EUR\s+Notebook x 3\s+Pen x 12\s+Thank you for being a VIP, Ada/);
    await screenshot(page, 'template-render-form');
    // The render the form sent holds exactly the typed data.
    const renders = await ui.server.request('GET', `/v1/renders?template_id=${id}`, { key: ui.boot.key });
    expect(renders.body.data).toHaveLength(1);
    expect(consoleErrors).toEqual([]);
  });

  it('shows the server’s 422 on /data beside the field it names, and in the JSON view', async () => {
    const { page } = ui.browser;
    const id = await frozenTemplate('Reminder');
    await page.goto(ui.at(`/templates/${id}`));
    const form = page.getByTestId('schema-form');
    await form.waitFor();
    // An expert types data that breaks the schema: customer is no object and amount is missing.
    await form.getByRole('button', { name: 'Edit as JSON' }).click();
    await form.getByLabel('Merge data (JSON)').fill(JSON.stringify({ customer: 'Ada', items: [] }));
    await page.getByRole('button', { name: 'Render', exact: true }).click();
    const problems = form.getByTestId('merge-data-problems');
    await problems.waitFor();
    const listed = await problems.innerText();
    expect(listed).toContain('customer: must be object');
    expect(listed).toContain('amount: is required');
    // Back in the form, each problem stands beside its field.
    await form.getByRole('button', { name: 'Back to the form' }).click();
    const customer = form.locator('fieldset', { has: page.locator('legend', { hasText: /^customer$/ }) });
    await expect(customer.locator('> .field-error').innerText()).resolves.toBe('must be object');
    const amount = form.locator('.field-invalid', { has: page.getByLabel('amount', { exact: true }) });
    await expect(amount.locator('.field-error').innerText()).resolves.toBe('is required');
    await screenshot(page, 'template-render-422');
    // Filling the fields mends it: the render goes through.
    await customer.getByLabel('name', { exact: true }).fill('Ada');
    await form.getByLabel('amount', { exact: true }).fill('10');
    await page.getByRole('button', { name: 'Render', exact: true }).click();
    await page.getByRole('link', { name: 'Download html' }).waitFor({ timeout: 30_000 });
    await expect(page.frameLocator('iframe[title="Rendered html"]').locator('body').innerText()).resolves.toContain('Offer for Ada');
    expect(consoleErrors).toEqual([]);
  });
});
