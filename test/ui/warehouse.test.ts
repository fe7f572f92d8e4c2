import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from '../warehouse/sources.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, signIn, type Browser } from './browser-support.js';

// Issue #60, item 4 in Chromium: a data source is added and tested from its page (the server's
// version shows), and a fact table is saved from its SQL with the columns the source described
// shown, its rows counted by the source; SQL that is not one read-only SELECT shows the refusal;
// a metric is defined on the fact table (its number column and a row filter) from the metric
// form, and the metrics list says which fact table and data source it reads. The fact table form
// sets how many hours of late rows each refresh reads again (restatement_hours).

describe.skipIf(!chromiumAvailable() || !chdbAvailable())('admin UI in Chromium: data sources and fact tables (#60)', () => {
  let server: TestServer;
  let source: ChdbSource;
  let browser: Browser;
  let boot: Bootstrap;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureWebBuild();
    source = await createChdbSource([
      "CREATE TABLE orders (customer String, placed_at DateTime64(3, 'UTC'), total Float64) ENGINE = MergeTree ORDER BY customer",
      "INSERT INTO orders VALUES ('c1', '2026-02-01 09:00:00', 12), ('c1', '2026-02-03 09:00:00', 30), ('c2', '2026-02-02 09:00:00', 8)",
    ]);
    server = await startTestServer('sqlite', { config: { dataSources: ALLOW_PRIVATE } });
    boot = await server.bootstrap('Warehouse Co');
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

  it('adds a ClickHouse source and tests it: the server version shows', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Data sources' }).click();
    await page.getByRole('heading', { name: 'New data source' }).waitFor();
    await page.getByLabel('Name').fill('Orders warehouse');
    await page.getByLabel('Kind').selectOption('clickhouse');
    await page.getByLabel('Connection URL').fill(source.url);
    await page.getByRole('button', { name: 'Add data source' }).click();
    const table = page.getByRole('table', { name: 'Data sources' });
    await table.getByText('Orders warehouse').waitFor();
    await table.getByRole('button', { name: 'Test Orders warehouse' }).click();
    const status = table.getByRole('status');
    await expect.poll(() => status.innerText(), { timeout: 20_000 }).toMatch(/^connected: version \d+\.\d+/);
    expect(consoleErrors).toEqual([]);
  });

  it('saves a fact table from its SQL, previews the described columns, counts its rows, and shows a refusal', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Fact tables' }).click();
    await page.getByRole('heading', { name: 'New fact table' }).waitFor();
    const fill = async (sql: string) => {
      await page.getByLabel('Name').fill('Orders');
      await page.getByLabel('SQL').fill(sql);
      await page.getByLabel('Unit id column').fill('customer');
      await page.getByLabel('Timestamp column').fill('placed_at');
      await page.getByLabel('Late rows re-read (hours)').fill('72');
      await page.getByRole('button', { name: 'Describe and save' }).click();
    };
    await fill('SELECT customer, placed_at FROM orders; DELETE FROM orders WHERE 1');
    await page.getByText(/must be one statement/).waitFor();
    await fill('SELECT customer, placed_at, total FROM orders');
    const preview = page.getByRole('table', { name: 'Columns of Orders' });
    await preview.waitFor();
    await expect(preview.innerText()).resolves.toMatch(
      /customer\s+String\s+unit id[\s\S]*placed_at\s+DateTime64\(3, 'UTC'\)\s+timestamp[\s\S]*total\s+Float64\s+number/,
    );
    const list = page.getByRole('table', { name: 'Fact tables' });
    await list.getByText('Orders warehouse').waitFor();
    await list.getByText('72 h').waitFor();
    const stored = await server.request('GET', '/v1/fact-tables', { key: boot.key });
    expect(stored.body.data.map((table: { name: string; restatement_hours: number }) => [table.name, table.restatement_hours])).toEqual([['Orders', 72]]);
    await list.getByRole('button', { name: 'Count rows' }).click();
    await expect.poll(() => list.getByRole('status').innerText(), { timeout: 20_000 }).toMatch(/^3 rows, 2 units, 2026-02-01 09:00:00/);
    expect(consoleErrors.filter((text) => !/status of 422/.test(text))).toEqual([]);
  });

  it('defines a metric on the fact table from the metric form; the list and its page name the fact table and source it reads', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Metrics', exact: true }).click();
    await page.getByText('No metrics yet.').waitFor();
    await page.getByLabel('Key', { exact: true }).fill('order-value');
    await page.getByLabel('Name', { exact: true }).fill('Order value');
    await page.getByLabel('Kind').selectOption('revenue');
    await page.getByLabel('Reads').selectOption('fact');
    await page.getByLabel('Aggregation').selectOption('sum');
    await page.getByLabel('Fact table').selectOption({ label: 'Orders' });
    await page.getByLabel('Column').selectOption('total');
    await page.getByLabel('Row filter').fill('total > 10');
    await page.getByRole('button', { name: 'Create metric' }).click();
    const row = page.getByRole('table', { name: 'Metrics' }).getByRole('row', { name: /Order value/ });
    await expect.poll(() => row.innerText(), { timeout: 20_000 }).toMatch(/fact table Orders on Orders warehouse where total > 10[\s\S]*sum of total/);
    const saved = await server.request('GET', '/v1/metrics', { key: boot.key });
    expect(saved.body.data[0]).toMatchObject({ key: 'order-value', column: 'total', filter: 'total > 10', event_key: null });
    // Its page says what it reads, and its row filter is edited there.
    await page.getByRole('table', { name: 'Metrics' }).getByRole('link', { name: 'Order value' }).click();
    await page.getByText('fact table Orders on Orders warehouse where total > 10').waitFor();
    await page.getByLabel('Row filter').fill('total > 20');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('fact table Orders on Orders warehouse where total > 20').waitFor();
    expect((await server.request('GET', `/v1/metrics/${saved.body.data[0].id}`, { key: boot.key })).body.filter).toBe('total > 20');
    expect(consoleErrors.filter((text) => !/status of 422/.test(text))).toEqual([]);
  });
});
