import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { fetchOutput, INVOICE_BODY, INVOICE_DATA, pdfText, startRenderWorker, waitForRender } from './support.js';

const ALL_FORMATS = ['html', 'text', 'markdown', 'pdf'];

async function frozenTemplate(server: TestServer, key: string, body = INVOICE_BODY) {
  const template = (await server.request('POST', '/v1/templates', { key, body: { name: 'Invoice', body } })).body;
  await server.request('POST', `/v1/templates/${template.id}/versions`, { key });
  return template;
}

async function render(server: TestServer, key: string, body: Record<string, unknown>) {
  const response = await server.request('POST', '/v1/renders', { key, body: { formats: ALL_FORMATS, data: INVOICE_DATA, ...body } });
  expect(response.status).toBe(202);
  return waitForRender(server, key, response.body.id);
}

async function outputs(server: TestServer, key: string, id: string) {
  const result: Record<string, Buffer> = {};
  for (const format of ALL_FORMATS) result[format] = (await fetchOutput(server, key, id, format)).bytes;
  return result;
}

describeEachDialect('renders', (server) => {
  let key: string;
  let worker: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    ({ key } = await server().bootstrap('Renders'));
  });
  afterAll(async () => {
    await worker?.stop();
  });
  /** Renders resolve only with a worker; the first test starts it itself, after checking a queued render. */
  const ensureWorker = () => {
    worker ??= startRenderWorker(server());
  };

  it('answers 202 with a queued render and serves its outputs once the job resolved it', async () => {
    const template = await frozenTemplate(server(), key);
    const response = await server().request('POST', '/v1/renders', { key, body: { template_id: template.id, formats: ['html', 'pdf'], data: INVOICE_DATA } });
    expect(response.status).toBe(202);
    expect(response.headers.get('location')).toBe(`/v1/renders/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      template_id: template.id,
      version: 'v1',
      formats: ['html', 'pdf'],
      status: 'queued',
      outputs: [],
      error: null,
      created_at: expect.any(String),
      resolved_at: null,
    });
    const early = await fetch(`${server().url}/v1/renders/${response.body.id}/outputs/html`, { headers: { authorization: `Bearer ${key}` } });
    expect(early.status).toBe(409);
    expect(((await early.clone().json()) as { type: string }).type).toBe('https://verdict.dev/problems/render-not-ready');
    expect(early.headers.get('retry-after')).toBe('1');
    expect(early.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    ensureWorker();
    const resolved = await waitForRender(server(), key, response.body.id);
    expect(resolved).toMatchObject({ status: 'resolved', error: null, resolved_at: expect.any(String) });
    expect(resolved.outputs).toEqual([
      { format: 'html', content_type: 'text/html; charset=utf-8', bytes: expect.any(Number), url: `/v1/renders/${resolved.id}/outputs/html` },
      { format: 'pdf', content_type: 'application/pdf', bytes: expect.any(Number), url: `/v1/renders/${resolved.id}/outputs/pdf` },
    ]);
    const pdf = await fetchOutput(server(), key, resolved.id, 'pdf');
    expect(pdf).toMatchObject({ status: 200, contentType: 'application/pdf' });
    expect(pdf.bytes.length).toBe(resolved.outputs[1].bytes);
    expect((await fetchOutput(server(), key, resolved.id, 'markdown')).status).toBe(404);
    expect((await fetchOutput(server(), key, resolved.id, 'docx')).status).toBe(400);
    const audit = await server().request('GET', `/v1/audit?target_id=${resolved.id}`, { key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        action: 'render.created',
        target_type: 'render',
        payload: { template_id: template.id, version: 'v1', formats: ['html', 'pdf'] },
      }),
    ]);
  });

  it('renders every format from one body, escaping merge values', async () => {
    ensureWorker();
    const template = await frozenTemplate(server(), key);
    const done = await render(server(), key, { template_id: template.id });
    expect(done.outputs.map((o: any) => [o.format, o.content_type])).toEqual([
      ['html', 'text/html; charset=utf-8'],
      ['text', 'text/plain; charset=utf-8'],
      ['markdown', 'text/markdown; charset=utf-8'],
      ['pdf', 'application/pdf'],
    ]);
    for (const output of done.outputs) {
      const fetched = await fetchOutput(server(), key, done.id, output.format);
      expect(fetched.contentType).toBe(output.content_type);
      expect(fetched.bytes.length).toBe(output.bytes);
    }
    const { html, text, markdown, pdf } = await outputs(server(), key, done.id);
    const page = html!.toString('utf8');
    expect(page).toMatch(/^<!DOCTYPE html>\n<html>/);
    expect(page).toContain('<title>Invoice INV-2024-0042</title>');
    expect(page).toContain('<h1>Invoice INV-2024-0042</h1>');
    expect(page).toContain('<strong>Ada &lt;script&gt;alert(1)&lt;/script&gt; Ltd</strong>');
    expect(page).not.toContain('<script>');
    expect(page).toContain('<td>Widget *deluxe*</td>');
    expect(page).toContain('<td>Gadget | spare</td>');
    expect(page).toContain('<td align="right">€9.50</td>');
    expect(page).toContain('<a href="mailto:billing@example.com">billing@example.com</a>');
    expect(page).toContain('VAT number: FR123');

    const plain = text!.toString('utf8');
    expect(plain).toContain('Issued 1 March 2024 to Ada <script>alert(1)</script> Ltd, Lyon.');
    expect(plain).toMatch(/Widget \*deluxe\* +2 +€9\.50/);
    expect(plain).toContain('- Total: €46.80');
    expect(plain).toContain('> Paid with thanks');
    expect(plain).not.toMatch(/\*\*|\|---/);

    const source = markdown!.toString('utf8');
    expect(source).toContain('# Invoice INV-2024-0042');
    expect(source).toContain('**Ada \\<script\\>alert(1)\\</script\\> Ltd**');
    expect(source).toContain('| Widget \\*deluxe\\* | 2 | €9.50 |');
    expect(source).toContain('| Gadget \\| spare | 1 | €20.00 |');

    expect(pdf!.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const extracted = await pdfText(pdf!);
    for (const value of [
      'Invoice INV-2024-0042',
      'Ada <script>alert(1)</script> Ltd',
      'Widget *deluxe*',
      'Gadget | spare',
      '€46.80',
      'Paid with thanks',
      'billing@example.com',
    ]) {
      expect(extracted).toContain(value);
    }
  });

  it('reproduces a frozen version byte for byte after the draft changed and after deletion', async () => {
    ensureWorker();
    const template = await frozenTemplate(server(), key);
    const before = await render(server(), key, { template_id: template.id, version: 'v1' });
    const beforeOutputs = await outputs(server(), key, before.id);

    await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { body: '# Receipt {{number}}\n\nThanks, {{customer.name}}.' } });
    const v2 = await server().request('POST', `/v1/templates/${template.id}/versions`, { key });
    expect(v2.body.label).toBe('v2');
    const again = await render(server(), key, { template_id: template.id, version: 'v1' });
    const againOutputs = await outputs(server(), key, again.id);
    for (const format of ['html', 'text', 'markdown']) expect(againOutputs[format]!.equals(beforeOutputs[format]!)).toBe(true);

    const latest = await render(server(), key, { template_id: template.id, formats: ['text'] });
    expect(latest.version).toBe('v2');
    expect((await fetchOutput(server(), key, latest.id, 'text')).bytes.toString()).toBe(
      'Receipt INV-2024-0042\n\nThanks, Ada <script>alert(1)</script> Ltd.\n',
    );

    expect((await server().request('DELETE', `/v1/templates/${template.id}`, { key })).status).toBe(204);
    const afterDelete = await render(server(), key, { template_id: template.id, version: 'v1' });
    expect(afterDelete).toMatchObject({ status: 'resolved', version: 'v1' });
    const deletedOutputs = await outputs(server(), key, afterDelete.id);
    for (const format of ['html', 'text', 'markdown']) expect(deletedOutputs[format]!.equals(beforeOutputs[format]!)).toBe(true);
    expect(await pdfText(deletedOutputs.pdf!)).toContain('Invoice INV-2024-0042');
    expect((await render(server(), key, { template_id: template.id, formats: ['html'] })).version).toBe('v2');
  });

  it('answers 404 for an unknown template or label and 422 when nothing was frozen', async () => {
    const unknown = await server().request('POST', '/v1/renders', { key, body: { template_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ', formats: ['html'], data: {} } });
    expect(unknown.status).toBe(404);
    const template = await frozenTemplate(server(), key);
    for (const version of ['v2', 'latest', 'v0']) {
      const response = await server().request('POST', '/v1/renders', {
        key,
        body: { template_id: template.id, version, formats: ['html'], data: INVOICE_DATA },
      });
      expect(response.status).toBe(404);
      expect(response.body.type).toMatch(/not-found/);
    }
    const draft = (await server().request('POST', '/v1/templates', { key, body: { name: 'Draft', body: 'Hi {{name}}' } })).body;
    const unfrozen = await server().request('POST', '/v1/renders', { key, body: { template_id: draft.id, formats: ['html'], data: { name: 'x' } } });
    expect(unfrozen.status).toBe(422);
    expect(unfrozen.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(unfrozen.body).toEqual({
      type: 'about:blank',
      title: 'Unprocessable',
      status: 422,
      detail: expect.stringMatching(/freeze/),
      instance: '/v1/renders',
    });
  });

  it('validates data against the frozen fields schema with pointers under /data', async () => {
    const template = await frozenTemplate(server(), key);
    const { name: _name, ...customer } = INVOICE_DATA.customer;
    const data = { ...INVOICE_DATA, customer, items: [{ description: 'x', quantity: { n: 1 }, unit_price: 1 }], totals: undefined };
    const response = await server().request('POST', '/v1/renders', { key, body: { template_id: template.id, formats: ['html'], data } });
    expect(response.status).toBe(422);
    expect(response.body.type).toMatch(/validation/);
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/data/totals', message: 'is required' },
        { pointer: '/data/customer/name', message: 'is required' },
        { pointer: '/data/items/0/quantity', message: expect.stringMatching(/must be/) },
      ]),
    );
    const body = { template_id: template.id, data: INVOICE_DATA };
    for (const formats of [[], ['html', 'html'], ['docx'], ['html', 'text', 'markdown', 'pdf', 'html']]) {
      const bad = await server().request('POST', '/v1/renders', { key, body: { ...body, formats } });
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0].pointer).toMatch(/^\/formats/);
    }
    const noData = await server().request('POST', '/v1/renders', { key, body: { template_id: template.id, formats: ['html'] } });
    expect(noData.body.errors).toEqual([{ pointer: '/data', message: 'is required' }]);
  });

  it('fails a render whose helper rejects the data, with the reason', async () => {
    ensureWorker();
    const template = await frozenTemplate(server(), key, 'Due {{formatDate due_at}}');
    const failed = await render(server(), key, { template_id: template.id, data: { due_at: 'next tuesday' } });
    expect(failed).toMatchObject({
      status: 'failed',
      outputs: [],
      resolved_at: expect.any(String),
      error: expect.stringMatching(/formatDate: "next tuesday" is not a date/),
    });
    const output = await fetchOutput(server(), key, failed.id, 'html');
    expect(output.status).toBe(409);
    expect(JSON.parse(output.bytes.toString()).type).toBe('https://verdict.dev/problems/render-failed');
    expect(JSON.parse(output.bytes.toString()).detail).toMatch(/failed: formatDate/);
  });

  it('keeps renders to their workspace and to server keys', async () => {
    ensureWorker();
    const template = await frozenTemplate(server(), key);
    const done = await render(server(), key, { template_id: template.id, formats: ['text'] });
    const { key: other } = await server().bootstrap('Elsewhere');
    const stolen = await server().request('POST', '/v1/renders', { key: other, body: { template_id: template.id, formats: ['html'], data: INVOICE_DATA } });
    expect(stolen.status).toBe(404);
    expect((await server().request('GET', `/v1/renders/${done.id}`, { key: other })).status).toBe(404);
    expect((await fetchOutput(server(), other, done.id, 'text')).status).toBe(404);
    const client = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'browser', kind: 'client' } })).body.key;
    expect((await server().request('POST', '/v1/renders', { body: { template_id: template.id, formats: ['html'], data: INVOICE_DATA } })).status).toBe(401);
    expect(
      (await server().request('POST', '/v1/renders', { key: client, body: { template_id: template.id, formats: ['html'], data: INVOICE_DATA } })).status,
    ).toBe(403);
    expect((await server().request('GET', `/v1/renders/${done.id}`, { key: client })).status).toBe(403);
    expect((await fetchOutput(server(), client, done.id, 'text')).status).toBe(403);
    expect((await server().request('GET', `/v1/renders/${done.id}`)).status).toBe(401);
  });

  it('lists the workspace’s renders newest first, by template and status, page by page', async () => {
    ensureWorker();
    const { key: own } = await server().bootstrap('Listing');
    const invoice = await frozenTemplate(server(), own);
    const note = await frozenTemplate(server(), own, 'Due {{formatDate due_at}}');
    const first = await render(server(), own, { template_id: invoice.id, formats: ['html'] });
    const failed = await render(server(), own, { template_id: note.id, formats: ['text'], data: { due_at: 'never' } });
    const last = await render(server(), own, { template_id: invoice.id, formats: ['text', 'pdf'] });

    const all = await server().request('GET', '/v1/renders', { key: own });
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: { id: string }) => r.id)).toEqual([last.id, failed.id, first.id]);
    expect(all.body.data[0]).toEqual(last);
    expect(all.body.next_cursor).toBeNull();

    const ofInvoice = await server().request('GET', `/v1/renders?template_id=${invoice.id}`, { key: own });
    expect(ofInvoice.body.data.map((r: { id: string }) => r.id)).toEqual([last.id, first.id]);
    const failures = await server().request('GET', '/v1/renders?status=failed', { key: own });
    expect(failures.body.data.map((r: { id: string; error: string }) => [r.id, r.error])).toEqual([[failed.id, expect.stringMatching(/formatDate/)]]);

    const pageOne = await server().request('GET', '/v1/renders?limit=2', { key: own });
    expect(pageOne.body.data.map((r: { id: string }) => r.id)).toEqual([last.id, failed.id]);
    const pageTwo = await server().request('GET', `/v1/renders?limit=2&cursor=${pageOne.body.next_cursor}`, { key: own });
    expect(pageTwo.body).toEqual({ data: [first], next_cursor: null });

    // Other workspaces' renders stay out, and bad filters are 400 problems naming the parameter.
    expect((await server().request('GET', '/v1/renders', { key })).body.data.map((r: { id: string }) => r.id)).not.toContain(first.id);
    const badStatus = await server().request('GET', '/v1/renders?status=done', { key: own });
    expect(badStatus.status).toBe(400);
    expect(badStatus.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(badStatus.body)).toMatch(/status/);
    expect((await server().request('GET', '/v1/renders?cursor=nonsense', { key: own })).status).toBe(400);
  });
});
