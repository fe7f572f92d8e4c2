import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExperiment, TWO_ARMS } from '../analysis/support.js';
import { freePort } from '../support/net.js';
import { Receiver } from '../webhooks/receiver.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// Issue #52 in Chromium, the endpoint pages: a bad URL answered beside its field in words, alerts
// limited to chosen experiments, a delivery log that names the experiment, a failing endpoint
// said in words, a response body readable across the page, no rotation for an unsigned Slack
// endpoint, and every control in reach at 1440 and at 390 px. No ULID or snake_case key on them.

const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/;
const SNAKE_KEY = /\b[a-z]+_[a-z_]+\b/;

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: webhook endpoint pages (#52)', () => {
  const receiver = new Receiver();
  let receiverPort = 0;
  beforeAll(async () => {
    receiverPort = await receiver.listen();
  });
  afterAll(async () => receiver.close());
  const ui = useAdminUi({
    config: { outbound: { retryBaseMs: 200, timeoutMs: 2_000, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 } },
  });

  async function endpointNamed(description: string) {
    const list = await ui.server.request('GET', '/v1/webhook-endpoints?limit=200', { key: ui.boot.key });
    return (list.body.data as any[]).find((endpoint) => endpoint.description === description);
  }

  /** Clicks Refresh until the first delivery row matches, as a person waiting for an attempt would. */
  async function firstDeliveryWhen(page: Page, done: (text: string) => boolean): Promise<string> {
    const row = page.getByTestId('delivery-row').first();
    for (let i = 0; i < 100; i += 1) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByRole('table', { name: 'Deliveries' }).waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      if (done(text)) return text;
      await page.waitForTimeout(100);
    }
    throw new Error(`the delivery never got there: ${await row.innerText()}`);
  }

  async function mainText(page: Page): Promise<string> {
    return page.locator('main').innerText();
  }

  it('answers a URL that is not http(s) beside the field, in words, and creates nothing', async () => {
    const { page } = ui.browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(ui.at('/webhook-endpoints'));
    const form = page.getByRole('form', { name: 'New endpoint' });
    await form.getByLabel('URL').fill('ftp://hooks.example.com/verdict');
    await form.getByLabel('Description').fill('Wrong scheme');
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const beside = form.locator('.field-invalid .field-error');
    await beside.waitFor();
    await expect(beside.innerText()).resolves.toBe('must be a web address starting with http:// or https://, e.g. https://hooks.example.com/verdict');
    await expect(form.getByLabel('URL').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(form.innerText()).resolves.not.toMatch(/must match pattern|\^https\?/);
    expect(await endpointNamed('Wrong scheme')).toBeUndefined();
  });

  it('limits an endpoint to chosen experiments, and its delivery log names the experiment of each event', async () => {
    const { page } = ui.browser;
    const checkout = await createExperiment(
      ui.server,
      ui.boot.key,
      { environment_id: ui.boot.environmentId, key: 'one-page-checkout', name: 'One-page checkout', variants: TWO_ARMS },
      false,
    );
    await createExperiment(
      ui.server,
      ui.boot.key,
      { environment_id: ui.boot.environmentId, key: 'pricing-page', name: 'Pricing page', variants: TWO_ARMS },
      false,
    );
    await page.goto(ui.at('/webhook-endpoints'));
    const form = page.getByRole('form', { name: 'New endpoint' });
    await form.getByLabel('URL').fill(`http://127.0.0.1:${receiverPort}/checkout-team`);
    await form.getByLabel('Description').fill('Checkout team');
    await form.getByLabel('Every experiment, including ones created later').uncheck();
    await form.getByLabel('One-page checkout').check();
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    await page
      .getByRole('region', { name: /^Signing secret of / })
      .getByRole('button', { name: 'I have stored it' })
      .click();
    const endpoint = await endpointNamed('Checkout team');
    expect(endpoint).toMatchObject({ experiment_ids: [checkout.id], experiments: [{ name: 'One-page checkout' }] });
    await expect(page.getByRole('table', { name: 'Webhook endpoints' }).innerText()).resolves.toMatch(
      /Checkout team.*every event\s+One-page checkout\s+Enabled/s,
    );

    for (const key of ['one-page-checkout', 'pricing-page']) {
      const experiments = await ui.server.request('GET', '/v1/experiments?limit=200', { key: ui.boot.key });
      const id = (experiments.body.data as any[]).find((experiment) => experiment.key === key).id;
      await ui.server.request('POST', `/v1/experiments/${id}/start`, { key: ui.boot.key });
    }
    await page.getByRole('link', { name: endpoint.url }).first().click();
    await page.getByRole('heading', { name: 'Checkout team' }).waitFor();
    const row = await firstDeliveryWhen(page, (text) => text.includes('succeeded'));
    expect(row).toMatch(/Started One-page checkout succeeded 1 200/);
    await expect(page.getByTestId('delivery-row').count()).resolves.toBe(1);
    await expect(page.locator('.facts').innerText()).resolves.toMatch(/Experiments\s+One-page checkout/i);
    const text = await mainText(page);
    expect(text).not.toMatch(ULID);
    expect(text).not.toMatch(SNAKE_KEY);
    await page.getByTestId('delivery-row').first().getByRole('link', { name: 'One-page checkout' }).waitFor();
  });

  it('shows a failing endpoint as Failing in words, in the list and on its page', async () => {
    const { page } = ui.browser;
    const created = await ui.server.request('POST', '/v1/webhook-endpoints', {
      key: ui.boot.key,
      body: { url: `http://127.0.0.1:${await freePort()}/gone`, event_types: ['*'], description: 'Nobody listens' },
    });
    await page.goto(ui.at(`/webhook-endpoints/${created.body.id}`));
    await page.getByRole('button', { name: 'Send test event' }).click();
    await firstDeliveryWhen(page, (text) => text.includes('ECONNREFUSED'));
    await page.reload();
    const state = page.locator('.facts').getByTestId('endpoint-state');
    await expect(state.getAttribute('data-state')).resolves.toBe('failing');
    await expect(state.innerText()).resolves.toMatch(/^Failing\s+deliveries failing since \d{2} \w{3} \d{4}/);
    await page.goto(ui.at('/webhook-endpoints'));
    const listed = page.getByRole('row', { name: /Nobody listens/ }).getByTestId('endpoint-state');
    await expect(listed.innerText()).resolves.toMatch(/^Failing/);
    const colour = await listed
      .locator('.badge')
      .evaluate((badge) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(badge).backgroundColor);
    expect(colour).not.toBe('rgba(0, 0, 0, 0)');
  });

  it('shows a response body across the page, and keeps Redeliver in view at 1440 px and the page within 390 px', async () => {
    const { page } = ui.browser;
    const endpoint = await endpointNamed('Checkout team');
    receiver.script.push({ status: 200, body: 'Thanks for the event, we stored it under our own reference and will process it shortly. '.repeat(6) });
    await page.goto(ui.at(`/webhook-endpoints/${endpoint.id}`));
    await page.getByRole('button', { name: 'Send test event' }).click();
    await firstDeliveryWhen(page, (text) => /Test event — succeeded/.test(text));
    const first = page.getByTestId('delivery-row').first();
    await first.getByRole('button', { name: 'Body' }).click();
    const body = page.getByTestId('delivery-body').first().locator('pre');
    const box = await body.boundingBox();
    const table = await page.locator('.table-wrap[aria-label="Deliveries"]').boundingBox();
    // Across the table, a few lines: not one word per line.
    expect(box?.width ?? 0).toBeGreaterThan((table?.width ?? 0) * 0.8);
    expect(box?.height ?? 0).toBeLessThan(200);

    const wrap = page.locator('.table-wrap[aria-label="Deliveries"]');
    await screenshot(page, 'webhook-endpoint-1440');
    const fits = await wrap.evaluate((element) => [element.scrollWidth, element.clientWidth]);
    expect(fits[0]).toBeLessThanOrEqual(fits[1] as number);
    const redeliver = await first.getByRole('button', { name: 'Redeliver' }).boundingBox();
    expect((redeliver?.x ?? 0) + (redeliver?.width ?? 0)).toBeLessThanOrEqual((table?.x ?? 0) + (table?.width ?? 0));
    await screenshot(page, 'webhook-endpoint-1440');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('table', { name: 'Deliveries' }).waitFor();
    await screenshot(page, 'webhook-endpoint-390');
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    expect(overflow).toBeLessThanOrEqual(0);
    for (const name of ['Send test event', 'Rotate secret', 'Delete']) {
      const button = await page.getByRole('button', { name, exact: true }).boundingBox();
      expect((button?.x ?? 0) + (button?.width ?? 0)).toBeLessThanOrEqual(390);
    }
    await page.goto(ui.at('/webhook-endpoints'));
    await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor();
    const listOverflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    expect(listOverflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'webhook-endpoints-390');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('offers no secret rotation for an unsigned Slack endpoint, and says why', async () => {
    const { page } = ui.browser;
    const created = await ui.server.request('POST', '/v1/webhook-endpoints', {
      key: ui.boot.key,
      body: { url: `http://127.0.0.1:${receiverPort}/slack`, event_types: ['*'], format: 'slack', description: 'Growth channel' },
    });
    await page.goto(ui.at(`/webhook-endpoints/${created.body.id}`));
    await page.getByRole('heading', { name: 'Growth channel' }).waitFor();
    await expect(page.getByRole('button', { name: 'Rotate secret' }).count()).resolves.toBe(0);
    await expect(page.locator('.facts').innerText()).resolves.toMatch(/Format\s+Slack incoming webhook: unsigned, the URL is the secret/i);
    await expect(page.locator('.facts').innerText()).resolves.not.toMatch(/Previous secret/i);
  });
});
