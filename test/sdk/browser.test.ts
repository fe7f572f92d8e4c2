import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type IngestSetup } from '../events/support.js';
import { chromiumAvailable, launchBrowser, type Browser } from '../ui/browser-support.js';
import { ensureSdkBuild, SDK_DIST, startExperiment, startSdkServer, storedEventIds } from './support.js';

// The built SDK in Debian's Chromium, loaded as an ES module by a page: events tracked just
// before the page is closed still arrive (the pagehide flush with keepalive).

/** Serves the test page and sdk/dist, and passes /v1/* on to Verdict (same origin, no CORS). */
async function startPageServer(verdictUrl: string, apiKey: string): Promise<{ url: string; eventRequests: () => number; close(): Promise<void> }> {
  let eventRequests = 0;
  const page = `<!doctype html><title>SDK</title><script type="module">
    import { createClient } from '/sdk/index.js';
    // A long interval: nothing is sent before the page goes away unless the page hide sends it.
    window.verdict = createClient({ baseUrl: location.origin, apiKey: ${JSON.stringify(apiKey)}, flushIntervalMs: 600000 });
    window.sdkReady = true;
  </script>`;
  const server = http.createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === '/') return void response.writeHead(200, { 'content-type': 'text/html' }).end(page);
    if (url.startsWith('/sdk/')) {
      const file = path.join(SDK_DIST, path.normalize(url.slice('/sdk/'.length)));
      if (!file.startsWith(SDK_DIST) || !fs.existsSync(file)) return void response.writeHead(404).end();
      return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(file));
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (url === '/v1/events/batch') eventRequests += 1;
      const body = Buffer.concat(chunks);
      fetch(verdictUrl + url, {
        method: request.method ?? 'GET',
        headers: { authorization: request.headers.authorization ?? '', 'content-type': request.headers['content-type'] ?? 'application/json' },
        ...(body.length > 0 ? { body } : {}),
      }).then(
        async (upstream) =>
          response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' }).end(await upstream.text()),
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    eventRequests: () => eventRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!chromiumAvailable())('@verdict/sdk in Chromium', () => {
  let setup: IngestSetup;
  let pages: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  const experimentKey = `hero-${Date.now()}`;

  beforeAll(async () => {
    ensureSdkBuild();
    setup = await startSdkServer();
    await startExperiment(setup, experimentKey);
    pages = await startPageServer(setup.server.url, setup.clientKey);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await setup?.stopDrainer();
    await setup?.server.close();
  });

  it('assigns in the page as POST /v1/assign does', async () => {
    const { page } = browser;
    await page.goto(pages.url);
    await page.waitForFunction(() => (globalThis as any).sdkReady === true);
    const inPage = await page.evaluate((key) => (globalThis as any).verdict.assign(key, 'browser-user'), experimentKey);
    const direct = await setup.server.request('POST', '/v1/assign', { key: setup.serverKey, body: { experiment_key: experimentKey, unit_id: 'browser-user' } });
    expect(inPage).toEqual(direct.body);
  });

  it('delivers the events tracked just before the page is closed', async () => {
    const { page } = browser;
    const ids: string[] = await page.evaluate(() =>
      Array.from({ length: 40 }, (_, n) => (globalThis as any).verdict.track('page-view', 'browser-user', { n, path: '/pricing' })),
    );
    expect(ids).toHaveLength(40);
    expect(pages.eventRequests()).toBe(0);
    await page.close();
    const stored = await waitFor(
      async () => {
        const found = new Set(await storedEventIds(setup));
        return ids.every((id) => found.has(id)) ? found : null;
      },
      15_000,
      'the events sent on pagehide to be stored',
    );
    expect(ids.filter((id) => stored.has(id))).toEqual(ids);
    expect(pages.eventRequests()).toBeGreaterThan(0);
  });
});
