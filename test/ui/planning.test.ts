import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { assignUnits, createExperiment, createMetric, DAY, HOUR, sendEvents, TWO_ARMS } from '../analysis/support.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// The plan panel of a draft answers from the metric's history what the planning endpoint answers,
// with its power chart; the results page shows the progress toward the planned sample.

describe.skipIf(!chromiumAvailable())('planning panels in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;
  let metricId: string;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Plan Co');
    metricId = await createMetric(server, boot.key, { key: 'purchase', name: 'Purchase conversion', event_key: 'purchase', kind: 'binary' });
    const now = Date.now();
    // 300 units visited over the last 6 days; 60 of them bought within an hour.
    const events = Array.from({ length: 300 }, (_, i) => {
      const seen = now - ((i % 6) + 1) * DAY + i * 1000;
      const visit = { event_key: 'visit', unit_id: `p-${i}`, occurred_at: seen };
      return i % 5 === 0 ? [visit, { event_key: 'purchase', unit_id: `p-${i}`, occurred_at: seen + HOUR }] : [visit];
    });
    await sendEvents(server, boot.key, events.flat());
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the plan panel of a draft says how long it must run and draws power by day', async () => {
    const draft = await createExperiment(
      server,
      boot.key,
      { key: 'plan-draft', name: 'Plan draft', environment_id: boot.environmentId, variants: TWO_ARMS, primary_metric_id: metricId },
      false,
    );
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${draft.id}`);
    const panel = page.getByTestId('plan-panel');
    await panel.waitFor();
    await panel.getByLabel('Lift to detect (%)').fill('50');
    await panel.getByRole('button', { name: 'Plan', exact: true }).click();
    const summary = page.getByTestId('plan-summary');
    await summary.waitFor();
    const text = await summary.innerText();
    expect(text).toMatch(/^About [\d,]+ days at 21 new units a day to detect a 50% lift in Purchase conversion with 80% power/);
    const api = await server.request('POST', '/v1/planning/power', {
      key: boot.key,
      body: {
        environment_id: boot.environmentId,
        variants: draft.variants.map((v: { key: string; weight: number; is_control: boolean }) => ({ key: v.key, weight: v.weight, is_control: v.is_control })),
        decision_rule: draft.decision_rule,
        metric_ids: [metricId],
        minimum_detectable_effect: 0.5,
      },
    });
    expect(api.status, api.text).toBe(200);
    expect(text).toBe(api.body.summary);
    expect(await page.getByTestId('plan-chart').getAttribute('aria-label')).toMatch(/^Power by day, from \d+% on day 1 to \d+% on day \d+$/);
    await page.getByTestId('plan-reached').waitFor();
    await screenshot(page, 'plan-panel');
  });

  it('the results page shows progress toward the planned sample and the days remaining', async () => {
    const decision_rule = { min_sample_per_variant: 100 };
    const running = await createExperiment(server, boot.key, {
      key: 'plan-running',
      name: 'Plan running',
      environment_id: boot.environmentId,
      variants: TWO_ARMS,
      primary_metric_id: metricId,
      decision_rule,
    });
    await assignUnits(
      server,
      boot.key,
      'plan-running',
      Array.from({ length: 40 }, (_, i) => `r-${i}`),
    );
    const computed = await server.request('POST', `/v1/experiments/${running.id}/results/compute`, { key: boot.key });
    expect(computed.status, computed.text).toBe(201);
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${running.id}/results`);
    const progress = page.getByTestId('plan-progress');
    await progress.waitFor();
    const smallest = Math.min(...computed.body.traffic.map((t: { exposed_units: number }) => t.exposed_units));
    expect(await progress.innerText()).toContain(`${smallest} of 100 units in the smallest variant`);
    const remaining = computed.body.planning.days_remaining as number;
    expect(await page.getByTestId('plan-days-remaining').innerText()).toBe(`about ${Math.ceil(remaining).toLocaleString('en-US')} more days`);
    await screenshot(page, 'plan-progress');
  });
});
