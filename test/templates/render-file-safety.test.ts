import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { chromiumAvailable, launchBrowser, type Browser } from '../ui/browser-support.js';
import { fetchOutput, startRenderWorker, waitForRender } from './support.js';

// Issue #51: a rendered html output saved to disk and opened from there has no CSP sandbox (the
// API serves one), so the renderer itself must keep markup, redirects and CSS out of the
// attributes a merge value reaches: `srcdoc`, a meta refresh's URL, `style`. Each render is
// opened in Chromium as a file; a dialog (alert) or a navigation away means a value got through.

async function renderToFile(
  server: TestServer,
  key: string,
  body: string,
  data: Record<string, unknown>,
  dir: string,
): Promise<{ file: string; html: string }> {
  const template = await server.request('POST', '/v1/templates', { key, body: { name: 'File safety', body } });
  expect(template.status, template.text).toBe(201);
  const version = await server.request('POST', `/v1/templates/${template.body.id}/versions`, { key });
  expect(version.status, version.text).toBe(201);
  const created = await server.request('POST', '/v1/renders', { key, body: { template_id: template.body.id, formats: ['html'], data } });
  expect(created.status, created.text).toBe(202);
  const render = await waitForRender(server, key, created.body.id);
  expect(render.status, JSON.stringify(render)).toBe('resolved');
  const html = (await fetchOutput(server, key, render.id, 'html')).bytes.toString();
  const file = path.join(dir, `${render.id}.html`);
  fs.writeFileSync(file, html);
  return { file, html };
}

/** Opens the file, waits for what a script or a refresh would do, and reports the dialogs and where the page ended up. */
async function openAsFile(browser: Browser, file: string): Promise<{ dialogs: string[]; url: string }> {
  const dialogs: string[] = [];
  const onDialog = (dialog: { message(): string; dismiss(): Promise<void> }) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  };
  browser.page.on('dialog', onDialog);
  try {
    await browser.page.goto(pathToFileURL(file).href);
    await browser.page.waitForTimeout(1_500);
    return { dialogs, url: browser.page.url() };
  } finally {
    browser.page.off('dialog', onDialog);
  }
}

describeEachDialect('rendered html opened as a file', (server, dialect) => {
  let key: string;
  let worker: { stop(): Promise<void> };
  let dir: string;
  let browser: Browser | undefined;
  // The browser's behaviour does not depend on the database: one dialect is enough.
  const inChromium = dialect === 'sqlite' && chromiumAvailable();

  beforeAll(async () => {
    ({ key } = await server().bootstrap('File safety'));
    worker = startRenderWorker(server());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-render-file-'));
    if (inChromium) browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await worker.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!inChromium)('runs no script from a value in srcdoc', async () => {
    const { file, html } = await renderToFile(server(), key, '<iframe id="bio" srcdoc="{{bio}}"></iframe>', { bio: "<script>alert('srcdoc')</script>" }, dir);
    expect(html).not.toContain('srcdoc');
    expect(await openAsFile(browser!, file)).toEqual({ dialogs: [], url: pathToFileURL(file).href });
  });

  it.skipIf(!inChromium)('follows no javascript: or data: address from a value in a meta refresh', async () => {
    for (const u of ["javascript:alert('refresh')", "data:text/html,<script>alert('refresh')</script>", " JAVA\tSCRIPT:alert('refresh')"]) {
      const { file, html } = await renderToFile(server(), key, '<meta http-equiv=refresh content="0; url={{u}}">\n\n# Page', { u }, dir);
      expect(html, u).toContain('<meta http-equiv="refresh">');
      expect(await openAsFile(browser!, file), u).toEqual({ dialogs: [], url: pathToFileURL(file).href });
    }
  });

  it.skipIf(!inChromium)('takes no CSS from a value in style: no overlay, no resource loaded, the body’s plain declarations kept', async () => {
    const overlay = 'position: fixed; inset: 0; z-index: 9; background-image: url(data:image/gif;base64,R0lGODlhAQABAAAAACw=); color: red';
    const { file } = await renderToFile(server(), key, '<p id="styled" style="font-weight: bold; {{s}}">styled</p>', { s: overlay }, dir);
    expect((await openAsFile(browser!, file)).dialogs).toEqual([]);
    // Evaluated in the page (a string: the test's own types have no DOM).
    const computed = (await browser!.page.evaluate(
      `(() => { const style = getComputedStyle(document.getElementById('styled')); return { position: style.position, backgroundImage: style.backgroundImage, color: style.color, fontWeight: style.fontWeight }; })()`,
    )) as { position: string; backgroundImage: string; color: string; fontWeight: string };
    expect(computed).toMatchObject({ position: 'static', backgroundImage: 'none', fontWeight: '700' });
    expect(computed.color).not.toBe('rgb(255, 0, 0)');
  });
});
