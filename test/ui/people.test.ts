import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { addPerson, PASSWORD } from '../people/people-support.js';
import { experimentWithResults } from '../people/result-fixture.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, screenshot, type Browser } from './browser-support.js';

async function signInWithPassword(browser: Browser, url: string, email: string): Promise<void> {
  const page = browser.page;
  await page.goto(`${url}/ui/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Experiments' }).waitFor();
}

async function signOut(browser: Browser): Promise<void> {
  await browser.page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await browser.page.getByRole('heading', { name: 'Sign in to Verdict' }).waitFor();
}

describe.skipIf(!chromiumAvailable())('people in the admin UI (Chromium)', () => {
  let server: TestServer;
  let browser: Browser;
  let experimentId: string;
  let key: string;

  beforeAll(async () => {
    ensureWebBuild();
    server = await startTestServer('sqlite');
    const boot = await server.bootstrap('Team Co');
    key = boot.key;
    ({
      experiment: { id: experimentId },
    } = await experimentWithResults(server, key, boot.environmentId, 'checkout'));
    await addPerson(server, key, 'vera@example.com', 'viewer', 'Vera Viewer');
    await addPerson(server, key, 'eddie@example.com', 'editor', 'Eddie Editor');
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('a new person accepts an invitation in the browser, then signs in with it', async () => {
    const invited = await server.request('POST', '/v1/users', { key, body: { email: 'ann@example.com', role: 'admin' } });
    const page = browser.page;
    await page.goto(invited.body.invite_url);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await page.getByLabel('Your name').fill('Ann Admin');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByText('Your password is set.').waitFor();
    await signInWithPassword(browser, server.url, 'ann@example.com');
    await page.getByText('Ann Admin · admin').waitFor();
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('cell', { name: 'vera@example.com' }).waitFor();
    await signOut(browser);
  });

  it('a viewer reads results but sees no edit controls, and the server refuses a change anyway', async () => {
    await signInWithPassword(browser, server.url, 'vera@example.com');
    const page = browser.page;
    await page.getByText('Vera Viewer · viewer').waitFor();
    expect(await page.getByRole('link', { name: 'People' }).count()).toBe(0);
    expect(
      await page
        .getByRole('link', { name: /New experiment/ })
        .isVisible()
        .catch(() => false),
    ).toBe(false);

    await page.goto(`${server.url}/ui/experiments/${experimentId}`);
    await page.getByRole('link', { name: 'View results' }).waitFor();
    for (const name of ['Stop…', 'Edit', 'Archive']) expect(await page.getByRole('button', { name, exact: true }).isVisible(), name).toBe(false);

    await page.goto(`${server.url}/ui/experiments/${experimentId}/results`);
    await page.getByRole('heading', { name: 'Share and export' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create read-only link' }).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Compute now' }).isVisible()).toBe(false);
    await page.getByRole('link', { name: 'Results (CSV)' }).waitFor();
    // Filters are reads: a viewer keeps them.
    await page.goto(`${server.url}/ui/audit`);
    await page.getByRole('button', { name: 'Apply filters' }).waitFor();
    await page.goto(`${server.url}/ui/experiments/${experimentId}/results`);
    await page.getByRole('heading', { name: 'Share and export' }).waitFor();
    await screenshot(page, 'people-viewer-results');

    // The browser's own session, with its CSRF token, is refused by the server all the same.
    const refused = await page.evaluate(async (id) => {
      const session = (await (await fetch('/ui/session')).json()) as { csrf_token: string };
      const answer = await fetch(`/v1/experiments/${id}/stop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
        body: JSON.stringify({ reason: 'viewer tries' }),
      });
      return { status: answer.status, type: answer.headers.get('content-type') };
    }, experimentId);
    expect(refused.status).toBe(403);
    expect(refused.type).toMatch(/application\/problem\+json/);
    const experiment = await server.request('GET', `/v1/experiments/${experimentId}`, { key });
    expect(experiment.body.status).toBe('running');
    await signOut(browser);
  });

  it('an editor shares the result by a read-only link, and the audit log names them', async () => {
    await signInWithPassword(browser, server.url, 'eddie@example.com');
    const page = browser.page;
    await page.goto(`${server.url}/ui/experiments/${experimentId}/results`);
    await page.getByRole('button', { name: 'Create read-only link' }).click();
    const url = (await page.getByTestId('secret').textContent())?.trim() ?? '';
    expect(url).toMatch(/\/v1\/shared\/vd_shr_/);
    const shared = await fetch(url);
    expect(shared.status).toBe(200);
    await page.goto(`${server.url}/ui/audit`);
    await page.getByTestId('audit-actor').filter({ hasText: 'Eddie Editor' }).first().waitFor();
    await screenshot(page, 'people-editor-audit');
    await signOut(browser);
  });
});
