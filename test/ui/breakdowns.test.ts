import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import { compute, createExperiment, createMetric, sendEvents } from '../analysis/support.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// Issue #18 in the admin UI: a breakdown table per dimension and for source, the slice whose SRM
// fails marked, and the SRM warning at the top linking to it.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: dimension breakdowns', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;
  let experiment: any;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Slices Co');
    const metric = await createMetric(server, boot.key, { key: 'converted', event_key: 'buy', kind: 'binary' });
    const errors = await createMetric(server, boot.key, { key: 'errors', name: 'Checkout errors', event_key: 'error', kind: 'count', higher_is_better: false });
    const variants = [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ];
    experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'slices-ui',
      variants,
      primary_metric_id: metric,
      guardrail_metric_ids: [errors],
      dimensions: ['country'],
    });
    const events: Array<{ event_key: string; unit_id: string; occurred_at: number }> = [];
    for (let i = 0; i < 600; i += 1) {
      const unit_id = `ui-${i}`;
      const country = ['de', 'fr', 'br'][i % 3] as string;
      const variant = chooseVariant('slices-ui', unit_id, variants).key;
      // Brazil's treatment exposures are lost: only one in five is logged.
      const logged = country !== 'br' || variant === 'control' || i % 5 === 0;
      const answer = await server.request('POST', '/v1/assign', {
        key: boot.key,
        body: { experiment_key: 'slices-ui', unit_id, context: { country }, log_exposure: logged },
      });
      expect(answer.status).toBe(200);
      if (i % 4 === 0) events.push({ event_key: 'buy', unit_id, occurred_at: Date.now() });
      // The treatment raises errors in Germany only: a harm the guardrail's breakdown finds.
      const errorCount = (i % 4 === 0 ? 1 : 0) + (country === 'de' && variant === 'treatment' ? 3 : 0);
      for (let j = 0; j < errorCount; j += 1) events.push({ event_key: 'error', unit_id, occurred_at: Date.now() });
    }
    await sendEvents(server, boot.key, events);
    await compute(server, boot.key, experiment.id);
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows a table per dimension, marks the broken slice and links the SRM warning to it', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${experiment.id}/results`);
    await page.getByRole('heading', { name: 'Breakdowns' }).waitFor();
    const country = page.getByRole('table', { name: 'By country' });
    await expect(country.getByRole('row').count()).resolves.toBe(4); // header, de, fr, br
    await page.getByLabel('Break the results down by').selectOption('source');
    const source = page.getByRole('table', { name: 'By source (the API key that logged the exposure)' });
    await expect(source.getByRole('row').count()).resolves.toBe(2); // header, the bootstrap key, by its name
    await expect(source.getByRole('row').nth(1).innerText()).resolves.toContain('Bootstrap server key');
    await page.getByLabel('Break the results down by').selectOption('country');
    const broken = country.getByRole('row').filter({ hasText: 'br' });
    await expect(broken.getAttribute('class')).resolves.toBe('slice-srm');
    await expect(broken.textContent()).resolves.toContain('SRM');
    const fine = country.getByRole('row').filter({ hasText: 'de' });
    await expect(fine.textContent()).resolves.not.toContain('SRM');
    // The same relative lift as the header, never points labelled %.
    await expect(fine.textContent()).resolves.toMatch(/[+−]\d+\.\d% \([+−]\d+\.\d% to [+−]\d+\.\d%\), chance to beat control \d+\.\d%/);

    const link = page.getByTestId('srm-slice-link');
    await expect(link.textContent()).resolves.toBe('country = br');
    await link.click();
    await expect(page.locator(':focus').textContent()).resolves.toContain('br');
    await screenshot(page, 'results-breakdowns');
  });

  it('breaks a guardrail down too, its harm marked in the slice where it happens', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${experiment.id}/results`);
    await page.getByRole('heading', { name: 'Breakdowns' }).waitFor();
    const picker = page.getByLabel('Metric', { exact: true });
    await expect(picker.locator('option').allInnerTexts()).resolves.toEqual(['converted (primary metric)', 'Checkout errors (guardrail)']);
    await picker.selectOption({ label: 'Checkout errors (guardrail)' });
    const country = page.getByRole('table', { name: 'By country' });
    await expect(country.getByRole('columnheader', { name: /Lift on Checkout errors/ }).count()).resolves.toBe(1);
    const germany = country.getByRole('row').filter({ hasText: 'de' });
    const badge = germany.getByTestId('significant-badge');
    await expect(badge.getAttribute('data-reading')).resolves.toBe('worse');
    await expect(badge.textContent()).resolves.toContain('significant harm after correction');
    await expect(country.getByRole('row').filter({ hasText: 'fr' }).getByTestId('significant-badge').count()).resolves.toBe(0);
    await screenshot(page, 'results-guardrail-breakdown');
  });

  it('edits the dimensions of the running experiment from its page', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${experiment.id}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    // The form is filled from the loaded experiment; typing before that would be overwritten.
    await expect.poll(() => page.getByLabel('Dimensions').inputValue()).toBe('country');
    await page.getByLabel('Dimensions').fill('country, plan');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(async () => (await server.request('GET', `/v1/experiments/${experiment.id}`, { key: boot.key })).body.dimensions)
      .toEqual(['country', 'plan']);
    // The editor is rebuilt from the saved experiment (its button off again): type into that one.
    await expect.poll(() => page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    await page.getByLabel('Dimensions').fill('a, b, c, d, e, f');
    await page.getByRole('button', { name: 'Save changes' }).click();
    // The server's 422 shows beside the field its pointer names.
    await page
      .locator('.field-invalid')
      .filter({ has: page.getByLabel('Dimensions') })
      .locator('.field-error')
      .waitFor();
    expect((await server.request('GET', `/v1/experiments/${experiment.id}`, { key: boot.key })).body.dimensions).toEqual(['country', 'plan']);
  });
});
