import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/jobs/worker.js';
import { createExperiment, exposeExactly, TWO_ARMS } from '../analysis/support.js';
import { freePort } from '../support/net.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { Receiver, verifies } from '../webhooks/receiver.js';
import { startWorker } from '../webhooks/support.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// Issue #35 in Chromium: webhook endpoints (the secret once, edits, a test ping, the delivery log
// with redelivery, rotation, deletion), the auto-stop switches on the experiment forms, and an
// experiment page that says, in words, why it stopped itself. No page logs a console error.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: webhook endpoints and auto-stop (#35)', () => {
  let server: TestServer;
  let worker: Worker;
  let receiver: Receiver;
  let receiverPort: number;
  let browser: Browser;
  let boot: Bootstrap;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureWebBuild();
    receiver = new Receiver();
    receiverPort = await receiver.listen();
    server = await startTestServer('sqlite', {
      config: { outbound: { retryBaseMs: 200, timeoutMs: 2_000, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 } },
    });
    worker = startWorker(server);
    boot = await server.bootstrap('Alerts Co');
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    browser.page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    browser.page.on('pageerror', (error) => consoleErrors.push(error.message));
    await signIn(browser.page, server.url, boot.key);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop(0);
    await receiver?.close();
    await server?.close();
  });

  /** Each endpoint's secret as the page showed it once, to check the receiver's signatures with. */
  const secrets = new Map<string, string>();

  async function endpoints() {
    return (await server.request('GET', '/v1/webhook-endpoints?limit=200', { key: boot.key })).body.data as any[];
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

  it('creates an endpoint and shows its secret once, with a copy button and a warning that it will not be shown again', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/webhook-endpoints`);
    await page.getByRole('heading', { name: 'New endpoint' }).waitFor();
    const url = `http://127.0.0.1:${receiverPort}/growth`;
    await page.getByLabel('URL').fill(url);
    await page.getByLabel('Description').fill('Growth alerts');
    await page.getByLabel('All events, including types added later').uncheck();
    await page.getByLabel(/^Split broken \(SRM\):/).check();
    await page.getByLabel(/^Stopped:/).check();
    await page.getByRole('button', { name: 'Create endpoint' }).click();

    const secretBox = page.getByRole('region', { name: `Signing secret of ${url}` });
    await secretBox.waitFor();
    await expect(secretBox.innerText()).resolves.toMatch(/you will not see it again/);
    const secret = await secretBox.getByTestId('secret').innerText();
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32,}$/);
    await secretBox.getByRole('button', { name: 'Copy' }).click();
    await secretBox.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(secret);
    // The URL is a secret: the list shows it masked.
    const [created] = (await endpoints()).filter((endpoint) => endpoint.description === 'Growth alerts');
    expect(created).toMatchObject({ url: `http://127.0.0.1:${receiverPort}/…`, format: 'verdict', enabled: true });
    await expect(page.getByRole('table', { name: 'Webhook endpoints' }).innerText()).resolves.not.toContain('/growth');
    expect(created.event_types.sort()).toEqual(['experiment.srm_detected', 'experiment.stopped']);
    await expect(page.getByRole('table', { name: 'Webhook endpoints' }).innerText()).resolves.toMatch(
      /Growth alerts\s+Verdict JSON, signed\s+Split broken \(SRM\), Stopped\s+every experiment\s+Enabled/,
    );

    await secretBox.getByRole('button', { name: 'I have stored it' }).click();
    await expect(page.locator('main').innerText()).resolves.not.toContain(secret);
    await page.reload();
    await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor();
    await expect(page.locator('main').innerText()).resolves.not.toContain(secret);
    expect(consoleErrors).toEqual([]);
    secrets.set(created.id, secret);
  });

  it('pings the endpoint and lists the delivery: status, attempts, code, the first 1 KB of the body; redelivers it', async () => {
    const { page } = browser;
    const [endpoint] = (await endpoints()).filter((item) => item.description === 'Growth alerts');
    const secret = secrets.get(endpoint.id) ?? '';
    receiver.script.push('endless');
    await page.goto(`${server.url}/ui/webhook-endpoints`);
    await page.getByRole('link', { name: endpoint.url }).click();
    await page.getByRole('heading', { name: 'Growth alerts' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const row = await firstDeliveryWhen(page, (text) => text.includes('succeeded'));
    expect(row).toMatch(/Test event — succeeded 1 200 Body/);
    await page.getByTestId('delivery-row').first().getByRole('button', { name: 'Body' }).click();
    const body = await page.getByTestId('delivery-body').first().locator('pre').innerText();
    expect(body).toHaveLength(1024);
    expect(body.startsWith('0123456789')).toBe(true);
    const [ping] = receiver.received.filter((item) => item.path === '/growth');
    expect(verifies(ping?.headers['verdict-signature'], ping?.body ?? '', secret)).toBe(true);

    await screenshot(page, 'webhook-endpoint');

    await page.getByTestId('delivery-row').first().getByRole('button', { name: 'Redeliver' }).click();
    const again = await firstDeliveryWhen(page, (text) => / succeeded 2 200 /.test(text));
    expect(again).toContain('Test event');
    const pings = receiver.received.filter((item) => item.path === '/growth');
    expect(pings).toHaveLength(2);
    expect(pings[1]?.headers['verdict-event-id']).toBe(pings[0]?.headers['verdict-event-id']);
    expect(consoleErrors).toEqual([]);
  });

  it('shows a failing delivery with its error and next attempt, and offers no redelivery while one is scheduled', async () => {
    const { page } = browser;
    const created = await server.request('POST', '/v1/webhook-endpoints', {
      key: boot.key,
      body: { url: `http://127.0.0.1:${await freePort()}/gone`, event_types: ['*'], description: 'Nobody listens' },
    });
    expect(created.status).toBe(201);
    await page.goto(`${server.url}/ui/webhook-endpoints/${created.body.id}`);
    await page.getByRole('heading', { name: 'Nobody listens' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const row = await firstDeliveryWhen(page, (text) => text.includes('ECONNREFUSED'));
    expect(row).toMatch(/Test event — pending [1-9]\d* — ECONNREFUSED/);
    const nextAttempt = page.getByTestId('delivery-row').first().locator('td').nth(8);
    await expect(nextAttempt.innerText()).resolves.toMatch(/\d{4}/);
    const redeliver = page.getByTestId('delivery-row').first().getByRole('button', { name: 'Redeliver' });
    await expect(redeliver.isDisabled()).resolves.toBe(true);
    await expect(redeliver.getAttribute('title')).resolves.toBe('An attempt is already scheduled.');
    expect(consoleErrors).toEqual([]);
  });

  it('rotates the secret; edits event types, format and enabled (a Slack endpoint has no secret to rotate); deletes after asking', async () => {
    const { page } = browser;
    const [endpoint] = (await endpoints()).filter((item) => item.description === 'Growth alerts');
    await page.goto(`${server.url}/ui/webhook-endpoints/${endpoint.id}`);
    const form = page.getByRole('form', { name: 'Edit endpoint' });
    await form.waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByRole('region', { name: 'New signing secret' });
    await rotated.waitFor();
    const secret = await rotated.getByTestId('secret').innerText();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(secrets.get(endpoint.id));
    await expect.poll(() => page.locator('.facts').innerText()).toMatch(/Previous secret signs until\s+\d/i);

    // The URL field starts empty (the masked URL as its placeholder), and saving it empty keeps the URL.
    await expect(form.getByLabel('New URL').inputValue()).resolves.toBe('');
    await expect(form.getByLabel('New URL').getAttribute('placeholder')).resolves.toBe(endpoint.url);
    await form.getByLabel(/^Guardrail got worse:/).check();
    await form.getByLabel('Format').selectOption('slack');
    await form.getByLabel(/^Enabled/).uncheck();
    await form.getByRole('button', { name: 'Save endpoint' }).click();
    await page.locator('.facts [data-state="disabled"]').waitFor();
    const [saved] = (await endpoints()).filter((item) => item.id === endpoint.id);
    expect(saved).toMatchObject({ format: 'slack', enabled: false, url: endpoint.url });
    const row = await server.ctx.db.selectFrom('webhook_endpoints').select('url_enc').where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    expect(server.ctx.secrets.open(row.url_enc)).toBe(`http://127.0.0.1:${receiverPort}/growth`);
    expect(saved.event_types.sort()).toEqual(['experiment.guardrail_regressed', 'experiment.srm_detected', 'experiment.stopped']);
    await expect(page.getByRole('button', { name: 'Send test event' }).isDisabled()).resolves.toBe(true);
    const redeliver = page.getByTestId('delivery-row').first().getByRole('button', { name: 'Redeliver' });
    await expect(redeliver.getAttribute('title')).resolves.toBe('Enable the endpoint to send to it again.');

    // A Slack endpoint is unsigned: no secret to rotate.
    await expect(page.getByRole('button', { name: 'Rotate secret' }).count()).resolves.toBe(0);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await page.getByRole('button', { name: 'Delete' }).click();
    expect(asked).toContain(endpoint.url);
    expect((await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: boot.key })).status).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
    await expect(page.getByRole('link', { name: endpoint.url }).count()).resolves.toBe(0);
    expect((await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: boot.key })).status).toBe(404);
    expect(consoleErrors).toEqual([]);
  });

  it('offers auto-stop switches on the new experiment form, the recommendation’s greyed with the reason under a posterior-threshold rule', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/new`);
    const switches = page.getByTestId('auto-stop');
    await switches.waitFor();
    const onRecommendation = switches.getByRole('switch', { name: 'Stop on the recommendation' });
    await expect(onRecommendation.isDisabled()).resolves.toBe(true);
    await expect(switches.getByTestId('auto-stop-blocked').innerText()).resolves.toMatch(/continuous monitoring .* 5\.7–11% .*docs\/statistics\.md/);
    await expect(switches.getByRole('switch', { name: 'Stop when the split breaks (SRM)' }).isDisabled()).resolves.toBe(false);

    await page.getByLabel('Method').selectOption('bayesian.always_valid_evalue');
    await expect(onRecommendation.isDisabled()).resolves.toBe(false);
    await expect(switches.getByTestId('auto-stop-blocked').count()).resolves.toBe(0);
    await onRecommendation.check();
    await switches.getByRole('switch', { name: 'Stop when the split breaks (SRM)' }).check();
    await page.getByLabel('Key', { exact: true }).fill('self-stopping');
    await page.getByLabel('Name', { exact: true }).fill('Self-stopping checkout');
    await page.getByLabel('Hypothesis').fill('It stops itself when it knows.');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByTestId('experiment-summary').waitFor();
    await expect(page.getByTestId('experiment-summary').innerText()).resolves.toMatch(
      /Auto-stop\s+stops automatically on the recommendation .*, on a broken split \(SRM\)/i,
    );
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const read = async () => (await server.request('GET', `/v1/experiments/${id}`, { key: boot.key })).body;
    expect((await read()).auto_stop).toEqual({ on_recommendation: true, on_guardrail_regression: false, on_srm: true });

    // The editor on the experiment page: turn the SRM stop off, a guardrail stop on.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByRole('group', { name: 'Auto-stop' });
    await editor.getByRole('switch', { name: 'Stop when the split breaks (SRM)' }).uncheck();
    await editor.getByRole('switch', { name: 'Stop when a guardrail regresses' }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await read()).auto_stop).toEqual({ on_recommendation: true, on_guardrail_regression: true, on_srm: false });
    expect(consoleErrors).toEqual([]);
  });

  it('greys the recommendation switch in the editor of an experiment under a posterior-threshold rule', async () => {
    const { page } = browser;
    const experiment = await createExperiment(server, boot.key, { environment_id: boot.environmentId, key: 'posterior-rule', variants: TWO_ARMS }, false);
    await page.goto(`${server.url}/ui/experiments/${experiment.id}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByRole('group', { name: 'Auto-stop' });
    await expect(editor.getByRole('switch', { name: 'Stop on the recommendation' }).isDisabled()).resolves.toBe(true);
    await expect(editor.getByTestId('auto-stop-blocked').innerText()).resolves.toContain('5.7–11%');
    expect(consoleErrors).toEqual([]);
  });

  it('says an experiment stopped automatically and why, in words with no snapshot id; and who stopped one by hand', async () => {
    const { page } = browser;
    const experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'broken-split',
      name: 'Broken split',
      variants: TWO_ARMS,
      auto_stop: { on_srm: true },
    });
    await exposeExactly(server, boot.key, experiment, { control: 200, treatment: 100 }, 'split');
    const snapshot = await server.request('POST', `/v1/experiments/${experiment.id}/results/compute`, { key: boot.key });
    expect(snapshot.status).toBe(201);
    await page.goto(`${server.url}/ui/experiments/${experiment.id}`);
    const note = page.getByTestId('stopped-by');
    await note.waitFor();
    const text = (await note.innerText()).replace(/\s+/g, ' ').trim();
    expect(text).toMatch(
      /^Stopped automatically on .+, as a bug: the split does not match the weights \(sample ratio test p [<=] [\d.]+\), so its results cannot be trusted\. See the results it stopped on\.$/,
    );
    expect(text).not.toContain(snapshot.body.id);
    await expect(note.getByRole('link', { name: 'See the results it stopped on' }).getAttribute('href')).resolves.toBe(
      `/ui/experiments/${experiment.id}/results`,
    );
    await screenshot(page, 'auto-stopped-experiment');

    const byHand = await createExperiment(server, boot.key, { environment_id: boot.environmentId, key: 'by-hand', variants: TWO_ARMS });
    await server.request('POST', `/v1/experiments/${byHand.id}/stop`, { key: boot.key, body: { reason: 'business' } });
    await page.goto(`${server.url}/ui/experiments/${byHand.id}`);
    await expect(page.getByTestId('stopped-by').innerText()).resolves.toMatch(/^Stopped through the API on /);
    expect(consoleErrors).toEqual([]);
  });
});
