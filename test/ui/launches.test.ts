import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// Launches and holdouts in the admin UI (issue #57): the launch button on a stopped experiment
// asks for a confirmation naming the checks when the recommendation is not to ship that variant;
// a holdout is created, started and shows the experiments it covers with their launches.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: launches and holdouts', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;
  let signups = '';

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Launch Co');
    signups = await createMetric(server, boot.key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary' });
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A stopped two-arm experiment, 100 units each, with the given sign-ups per arm and one snapshot. */
  async function stoppedWith(key: string, counts: [number, number]) {
    const experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key,
      name: `Checkout ${key}`,
      primary_metric_id: signups,
      decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 50 },
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    const units = await exposeExactly(server, boot.key, experiment, { control: 100, treatment: 100 }, key);
    const now = Date.now();
    const events = (['control', 'treatment'] as const).flatMap((variant, arm) =>
      (units[variant] ?? []).slice(0, counts[arm]).map((unit_id) => ({ event_key: 'signup', unit_id, occurred_at: now })),
    );
    await sendEvents(server, boot.key, events);
    const snapshot = await compute(server, boot.key, experiment.id);
    await server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: boot.key, body: { reason: 'won' } });
    return { experiment, snapshot };
  }

  it('launches the recommended winner at once, and asks to confirm, naming the checks, a variant the results do not support', async () => {
    const { page } = browser;
    const winner = await stoppedWith('winner', [20, 80]);
    expect(winner.snapshot.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment' });
    await page.goto(`${server.url}/ui/experiments/${winner.experiment.id}`);
    const panel = page.getByTestId('launch-panel');
    await panel.getByRole('button', { name: 'Launch treatment' }).waitFor();
    await expect(page.getByLabel('Variant to launch').inputValue()).resolves.toBe('treatment');
    await panel.getByRole('button', { name: 'Launch treatment' }).click();
    await panel.getByTestId('launched').waitFor();
    await expect(panel.getByTestId('launch-confirmation').count()).resolves.toBe(0);
    expect((await server.request('GET', `/v1/experiments/${winner.experiment.id}`, { key: boot.key })).body.launched_variant_key).toBe('treatment');
    await page.goto(`${server.url}/ui/experiments?status=stopped`);
    await expect(page.getByTestId(`experiment-row-winner`).getByTestId('list-launched').innerText()).resolves.toBe('launched: treatment');

    const level = await stoppedWith('level', [30, 33]);
    expect(level.snapshot.decision.recommendation.action).toBe('keep_running');
    await page.goto(`${server.url}/ui/experiments/${level.experiment.id}`);
    await page.getByTestId('launch-panel').getByRole('button', { name: 'Launch treatment' }).click();
    const checks = await page.getByTestId('launch-confirmation').locator('li').allInnerTexts();
    expect(checks[0]).toBe('The latest recommendation is “keep running”, not a launch of treatment.');
    expect(checks.some((text) => /^The 95% interval of treatment’s effect \(.+ to .+\) spans zero/.test(text))).toBe(true);
    await screenshot(page, 'launch-confirmation');
    expect((await server.request('GET', `/v1/experiments/${level.experiment.id}`, { key: boot.key })).body.launched_variant_key).toBeNull();
    await page.getByRole('button', { name: 'Launch treatment anyway' }).click();
    await page.getByTestId('launched').waitFor();
    expect((await server.request('GET', `/v1/experiments/${level.experiment.id}`, { key: boot.key })).body.launched_variant_key).toBe('treatment');
  });

  it('creates and starts a holdout, and shows the experiments it covers with their launches', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/holdouts`);
    await page.getByLabel('Name').fill('Q3 holdout');
    await page.getByLabel('Percent held out').fill('10');
    await page.getByRole('button', { name: 'Create holdout' }).click();
    await page.getByRole('button', { name: 'Start holdout' }).click();
    await page.getByRole('button', { name: 'End holdout' }).waitFor();
    const holdoutId = page.url().split('/').pop() as string;
    expect((await server.request('GET', `/v1/holdouts/${holdoutId}`, { key: boot.key })).body).toMatchObject({ status: 'running', percent: 10 });

    // Started after the holdout: covered. (Its units are not exposed here: some would be held out.)
    const experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'covered',
      name: 'Checkout covered',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    await server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: boot.key, body: { reason: 'won' } });
    const covered = { experiment };
    await server.request('POST', `/v1/experiments/${covered.experiment.id}/launch`, { key: boot.key, body: { variant_key: 'treatment' } });
    await page.goto(`${server.url}/ui/experiments/${covered.experiment.id}`);
    await expect(page.getByTestId('holdout-note').innerText()).resolves.toBe(
      'A holdout (Q3 holdout) keeps 10% of units on the control (launched or not) and out of this experiment’s results.',
    );
    await page.getByRole('link', { name: 'Q3 holdout' }).click();
    const rows = page.getByTestId('holdout-experiments').getByRole('row');
    await rows.nth(1).waitFor();
    const texts = await rows.allInnerTexts();
    expect(texts.slice(1).map((text) => text.split('\t').slice(1).join(' ').trim())).toEqual([
      'Checkout covered started',
      'Checkout covered stopped',
      'Checkout covered launched treatment',
    ]);
    await screenshot(page, 'holdout-page');
  });
});
