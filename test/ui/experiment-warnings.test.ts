import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { experimentBody } from '../experiments/helpers.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, signIn, type Browser } from './browser-support.js';

// The experiment page shows the API's underpowered warning with its estimate, and it goes away
// once the decision rule is edited to an MDE the planned units can detect.

describe.skipIf(!chromiumAvailable())('experiment page planning warning in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let boot: Bootstrap;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    boot = await server.bootstrap('Power Co');
    browser = await launchBrowser();
    await signIn(browser.page, server.url, boot.key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the mSPRT warning with the estimate, and clears it when the MDE is raised', async () => {
    const body = experimentBody(boot.environmentId, { key: 'msprt-plan', name: 'mSPRT plan', decision_rule: { method: 'frequentist.sequential_msprt' } });
    const created = await server.request('POST', '/v1/experiments', { key: boot.key, body });
    expect(created.status).toBe(201);
    const estimate = created.body.warnings[0].estimated_units_per_variant as number;
    expect(estimate).toBeGreaterThan(40 * 20_000);

    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/${created.body.id}`);
    const warning = page.getByTestId('warning-underpowered');
    await warning.waitFor();
    const text = await warning.innerText();
    expect(text).toContain('Too few units planned for this rule.');
    expect(text).toContain(`about ${estimate.toLocaleString('en-US')} units per variant`);
    expect(text).toContain('the planned minimum sample of 20,000 units per variant');
    expect(text).not.toMatch(/min_sample_per_variant|minimum_detectable_effect|frequentist\./);
    await screenshot(page, 'experiment-underpowered-warning');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Minimum detectable effect (%)').fill('20');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await warning.waitFor({ state: 'detached' });
    const stored = await server.request('GET', `/v1/experiments/${created.body.id}`, { key: boot.key });
    expect(stored.body.decision_rule.minimum_detectable_effect).toBe(0.2);
    expect(stored.body.warnings).toEqual([]);
  });
});
