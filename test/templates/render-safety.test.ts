import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser } from '../ui/browser-support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { fetchOutput, startRenderWorker, waitForRender } from './support.js';

async function frozenTemplate(server: TestServer, key: string, body: string) {
  const template = await server.request('POST', '/v1/templates', { key, body: { name: 'Safety', body } });
  expect(template.status, template.text).toBe(201);
  const version = await server.request('POST', `/v1/templates/${template.body.id}/versions`, { key });
  expect(version.status, version.text).toBe(201);
  return { id: template.body.id as string, version: version.body };
}

async function renderHtml(server: TestServer, key: string, templateId: string, data: Record<string, unknown>, formats = ['html']) {
  const created = await server.request('POST', '/v1/renders', { key, body: { template_id: templateId, formats, data } });
  expect(created.status, created.text).toBe(202);
  const render = await waitForRender(server, key, created.body.id);
  expect(render.status, JSON.stringify(render)).toBe('resolved');
  return render.id as string;
}

const LINKS_BODY = '# Pay\n\n[pay]({{url}}) ![logo]({{url}}) <a href="{{url}}">raw</a> <a href={{url}}>bare</a> [ref][r]\n\n[r]: {{url}}';

describeEachDialect('render safety', (server, dialect) => {
  let key: string;
  let worker: { stop(): Promise<void> };
  beforeAll(async () => {
    ({ key } = await server().bootstrap('Safety'));
    worker = startRenderWorker(server());
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('links a javascript: address hidden behind a control character, a tab or case nowhere, in every link form', async () => {
    const template = await frozenTemplate(server(), key, LINKS_BODY);
    for (const url of ['\u0001javascript:alert(document.domain)', ' java\tscript:alert(1)', 'JAVASCRIPT:alert(1)', '//evil.example/x', 'data:text/html,x']) {
      const id = await renderHtml(server(), key, template.id, { url }, ['html', 'markdown']);
      const html = (await fetchOutput(server(), key, id, 'html')).bytes.toString();
      const addresses = [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((match) => match[1]);
      expect(addresses, JSON.stringify(url)).toEqual(['#', '#', '#', '#', '#']);
      const markdown = (await fetchOutput(server(), key, id, 'markdown')).bytes.toString();
      expect(markdown, JSON.stringify(url)).toContain('[pay](#) ![logo](#)');
      expect(markdown).toContain('[r]: #');
    }
    const ok = await renderHtml(server(), key, template.id, { url: 'https://pay.example/i?x=1&y=2' });
    expect((await fetchOutput(server(), key, ok, 'html')).bytes.toString()).toContain('<a href="https://pay.example/i?x=1&amp;y=2">pay</a>');
  });

  it('serves rendered HTML inert: a sandbox Content-Security-Policy and nosniff on the output', async () => {
    const template = await frozenTemplate(server(), key, '# Hi {{name}}');
    const id = await renderHtml(server(), key, template.id, { name: 'Ada' }, ['html', 'pdf']);
    const html = await fetch(`${server().url}/v1/renders/${id}/outputs/html`, { headers: { authorization: `Bearer ${key}` } });
    expect(html.status).toBe(200);
    const policy = html.headers.get('content-security-policy') ?? '';
    expect(policy.split(';').map((directive) => directive.trim())).toEqual(
      expect.arrayContaining(['sandbox', "default-src 'none'", "style-src 'unsafe-inline'", "form-action 'none'"]),
    );
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    const pdf = await fetch(`${server().url}/v1/renders/${id}/outputs/pdf`, { headers: { authorization: `Bearer ${key}` } });
    expect(pdf.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('discovers the value of {{default nickname "friend"}} as optional, and renders {} with the fallback', async () => {
    const template = await frozenTemplate(server(), key, 'Hello {{default nickname "friend"}}, {{default note greeting}} {{name}}');
    const schema = template.version.fields_schema;
    expect(schema.required).toEqual(['name']);
    for (const field of ['nickname', 'note', 'greeting']) expect(schema.properties[field]).toEqual({});
    const id = await renderHtml(server(), key, template.id, { name: 'Ada' }, ['text']);
    expect((await fetchOutput(server(), key, id, 'text')).bytes.toString()).toBe('Hello friend,  Ada\n');
    const onlyDefault = await frozenTemplate(server(), key, 'Hello {{default nickname "friend"}}');
    expect(onlyDefault.version.fields_schema.required).toBeUndefined();
    const empty = await renderHtml(server(), key, onlyDefault.id, {}, ['text']);
    expect((await fetchOutput(server(), key, empty, 'text')).bytes.toString()).toBe('Hello friend\n');
    const missing = await server().request('POST', '/v1/renders', { key, body: { template_id: template.id, formats: ['text'], data: {} } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ pointer: '/data/name', message: 'is required' }]);
  });

  // The browser's behaviour does not depend on the database: one dialect is enough.
  it.skipIf(dialect !== 'sqlite' || !chromiumAvailable())(
    'runs no script in Chromium when the rendered link is clicked, nor when the page is opened',
    async () => {
      const template = await frozenTemplate(
        server(),
        key,
        '# Doc\n\n[pay]({{url}}) <a id="raw" href="{{url}}">raw</a>\n\n<img src=x onerror="alert(\'img\')">',
      );
      // The payload: one control character before javascript:, which Chromium strips.
      const id = await renderHtml(server(), key, template.id, { url: '\u0001javascript:alert(document.domain)' });
      const browser = await launchBrowser();
      try {
        const dialogs: string[] = [];
        browser.page.on('dialog', (dialog) => {
          dialogs.push(dialog.message());
          void dialog.dismiss();
        });
        await browser.context.setExtraHTTPHeaders({ authorization: `Bearer ${key}` });
        for (const link of ['text=pay', '#raw']) {
          await browser.page.goto(`${server().url}/v1/renders/${id}/outputs/html`);
          await browser.page.click(link);
          await browser.page.waitForTimeout(200);
        }
        expect(dialogs).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});
