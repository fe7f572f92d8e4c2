import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from '../warehouse/sources.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, signIn, type Browser } from './browser-support.js';

// Issue #60 item 4 in Chromium: an assignment source is saved from its SQL and four columns on
// its page, with the described columns previewed and each one's use shown; SQL that is not one
// read-only SELECT shows the refusal; its units are counted by the source per experiment key and
// variant. The new experiment form then creates an experiment "assigned elsewhere" on it, and
// the experiment's page says Verdict assigns none of its units.

describe.skipIf(!chromiumAvailable() || !chdbAvailable())('admin UI in Chromium: assignment sources and analysis-only experiments (#60)', () => {
  let server: TestServer;
  let source: ChdbSource;
  let browser: Browser;
  let boot: Bootstrap;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureWebBuild();
    source = await createChdbSource([
      "CREATE TABLE exposures (uid String, test String, arm String, seen DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY uid",
      "INSERT INTO exposures VALUES ('a', 'pricing', 'control', '2026-02-01 09:00:00'), ('b', 'pricing', 'cheaper', '2026-02-01 10:00:00'), ('b', 'pricing', 'control', '2026-02-02 10:00:00'), ('c', 'pricing', 'cheaper', '2026-02-03 10:00:00')",
    ]);
    server = await startTestServer('sqlite', { config: { dataSources: ALLOW_PRIVATE } });
    boot = await server.bootstrap('Elsewhere Co');
    const created = await server.request('POST', '/v1/data-sources', { key: boot.key, body: { name: 'Events lake', kind: 'clickhouse', url: source.url } });
    expect(created.status, created.text).toBe(201);
    browser = await launchBrowser();
    browser.page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    browser.page.on('pageerror', (error) => consoleErrors.push(error.message));
    await signIn(browser.page, server.url, boot.key);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await source?.drop();
  });

  it('saves an assignment source with its four columns, previews the described columns, shows a refusal, and counts its units', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Assignment sources' }).click();
    await page.getByRole('heading', { name: 'New assignment source' }).waitFor();
    const fill = async (sql: string) => {
      await page.getByLabel('Name').fill('Pricing exposures');
      await page.getByLabel('SQL').fill(sql);
      await page.getByLabel('Unit id column').fill('uid');
      await page.getByLabel('Experiment key column').fill('test');
      await page.getByLabel('Variant key column').fill('arm');
      await page.getByLabel('Timestamp column').fill('seen');
      await page.getByRole('button', { name: 'Describe and save' }).click();
    };
    await fill('SELECT uid, test, arm, seen FROM exposures; DROP TABLE exposures');
    await page.getByText(/must be one statement/).waitFor();
    await fill('SELECT uid, test, arm, seen FROM exposures');
    const preview = page.getByRole('table', { name: 'Columns of Pricing exposures' });
    await preview.waitFor();
    await expect(preview.innerText()).resolves.toMatch(
      /uid\s+String\s+unit id[\s\S]*test\s+String\s+experiment key[\s\S]*arm\s+String\s+variant key[\s\S]*seen\s+DateTime64\(3, 'UTC'\)\s+timestamp/,
    );
    const list = page.getByRole('table', { name: 'Assignment sources' });
    await list.getByText('Events lake').waitFor();
    await list.getByRole('button', { name: 'Count units of Pricing exposures' }).click();
    await expect.poll(() => list.getByRole('status').innerText(), { timeout: 30_000 }).toBe('pricing: 3 units (cheaper 2, control 1; 1 in several variants)');
    expect(consoleErrors.filter((text) => !/status of 422/.test(text))).toEqual([]);
  }, 180_000);

  it('creates an experiment assigned elsewhere from the new experiment form; its page says Verdict assigns none of its units', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/ui/experiments/new`);
    await page.getByLabel('Assigned by').selectOption({ label: 'Assigned elsewhere (assignment source): Pricing exposures' });
    await page.getByLabel('Key in the assignment source').fill('pricing');
    await page.getByLabel('Key', { exact: true }).fill('pricing-2026');
    await page.getByLabel('Name', { exact: true }).fill('Cheaper plans');
    await page.getByLabel('Hypothesis').fill('Cheaper plans sell more.');
    await page.getByLabel('Variant 2 key').fill('cheaper');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    const summary = page.getByTestId('experiment-summary');
    await summary.waitFor();
    await expect(summary.innerText()).resolves.toMatch(
      /Assigned by\s+elsewhere: exposures read from an assignment source \(as pricing\); Verdict assigns none/i,
    );
    const id = new URL(page.url()).pathname.split('/').pop() ?? '';
    const read = (await server.request('GET', `/v1/experiments/${id}`, { key: boot.key })).body;
    const sources = (await server.request('GET', '/v1/assignment-sources', { key: boot.key })).body;
    expect(read).toMatchObject({ assignment_source_id: sources.data[0].id, assignment_experiment_key: 'pricing' });
    expect(consoleErrors.filter((text) => !/status of 422/.test(text))).toEqual([]);
  }, 180_000);
});
