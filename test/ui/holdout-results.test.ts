import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, ManualClock, createExperiment, createMetric, sendEvents } from '../analysis/support.js';
import { answersFor, heldOut, unitIds } from '../holdouts/support.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// A holdout's own results in the admin UI (issue #57): its metrics chosen on its page, a snapshot
// computed there, the scorecard of held-out units against the sample, and the launches on a timeline.

const clock = new ManualClock();

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: a holdout’s results', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite', { clock });
    boot = await server.bootstrap('Holdout Co');
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('measures the chosen metric on the held-out units against the sample, and shows the launches on a timeline', async () => {
    const { page } = browser;
    await createMetric(server, boot.key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary', unit_dedup_window: 'PT30M' });
    const created = await server.request('POST', '/v1/holdouts', {
      key: boot.key,
      body: { name: 'Q4 holdout', unit_type: 'user', environment_id: boot.environmentId, percent: 20 },
    });
    const holdoutId = created.body.id as string;
    await server.request('POST', `/v1/holdouts/${holdoutId}/start`, { key: boot.key });
    const experiment = await createExperiment(server, boot.key, {
      environment_id: boot.environmentId,
      key: 'onboarding',
      name: 'Onboarding',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    const units = unitIds('visitor', 400);
    const held = new Set(heldOut(await answersFor(server, boot.key, 'onboarding', units)));
    // Everyone else signs up seven times as often as the held-out units (70% against 10%): the
    // holdout's salt is random, so which units it keeps out differs from run to run, and the lift
    // must read as better whichever they are (about 80 units a group).
    const signups = units.filter((unit, index) => (held.has(unit) ? index % 10 === 0 : index % 10 < 7));
    await sendEvents(
      server,
      boot.key,
      signups.map((unit_id) => ({ event_key: 'signup', unit_id, occurred_at: clock.now() + 60_000 })),
    );
    await server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: boot.key, body: { reason: 'won' } });
    await server.request('POST', `/v1/experiments/${experiment.id}/launch`, { key: boot.key, body: { variant_key: 'treatment' } });
    clock.advance(HOUR);

    await page.goto(`${server.url}/ui/holdouts/${holdoutId}`);
    await page.getByTestId('holdout-results').getByText('No results yet.').waitFor();
    await page.getByLabel('Sign-ups').check();
    await page.getByRole('button', { name: 'Save metrics' }).click();
    await expect.poll(async () => (await server.request('GET', `/v1/holdouts/${holdoutId}`, { key: boot.key })).body.metric_ids.length).toBe(1);
    await page.getByRole('button', { name: 'Compute results now' }).click();
    const row = page.getByTestId('holdout-metric-signed_up');
    await row.waitFor();

    const snapshot = (await server.request('GET', `/v1/holdouts/${holdoutId}/results`, { key: boot.key })).body;
    const [heldOutGroup, sampleGroup] = snapshot.metrics[0].per_group;
    expect(heldOutGroup.sample_size).toBe(held.size);
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).toBe(`${(heldOutGroup.observed_rate * 100).toFixed(2)}%`);
    expect(cells[1]).toBe(`${(sampleGroup.observed_rate * 100).toFixed(2)}%`);
    await expect(page.getByTestId('holdout-lift-signed_up').getAttribute('data-reading')).resolves.toBe('better');
    await expect(page.getByTestId('holdout-groups').innerText()).resolves.toContain(`held out ${held.size} units · sample ${sampleGroup.sample_size} units`);
    await expect(page.getByTestId('timeline-launch').allInnerTexts()).resolves.toEqual([expect.stringMatching(/: onboarding launched treatment$/)]);
    await screenshot(page, 'holdout-results');
  });
});
