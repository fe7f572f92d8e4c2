import { expect } from 'vitest';
import { startTestWorker } from '../support/jobs.js';
import type { TestServer } from '../support/server.js';

export { pdfText } from './pdf-text.js';

/** The job worker a `verdict serve` runs, on the test server's context (the test server runs none). */
export function startRenderWorker(server: TestServer): { stop(): Promise<void> } {
  const worker = startTestWorker(server, { logger: server.ctx.logger, pollIntervalMs: 25, leaseMs: 30_000, concurrency: 4, wakeOnEnqueue: true });
  return {
    async stop() {
      server.ctx.onJobEnqueued = null;
      await worker.stop();
    },
  };
}

/** Polls GET /v1/renders/{id} until the render resolves or fails. */
export async function waitForRender(server: TestServer, key: string, id: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await server.request('GET', `/v1/renders/${id}`, { key });
    expect(response.status).toBe(200);
    if (response.body.status === 'resolved' || response.body.status === 'failed') return response.body;
    if (Date.now() > deadline) throw new Error(`render ${id} is still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface FetchedOutput {
  status: number;
  contentType: string | null;
  bytes: Buffer;
}

export async function fetchOutput(server: TestServer, key: string, renderId: string, format: string): Promise<FetchedOutput> {
  const response = await fetch(`${server.url}/v1/renders/${renderId}/outputs/${format}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, contentType: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

/** A realistic invoice: Markdown with merge fields, a loop, a condition and helpers. */
export const INVOICE_BODY = [
  '# Invoice {{number}}',
  '',
  'Issued {{formatDate issued_at "D MMMM YYYY"}} to **{{customer.name}}**, {{customer.address.city}}.',
  '{{#if customer.vat_id}}',
  'VAT number: {{customer.vat_id}}',
  '{{/if}}',
  '',
  '| Item | Quantity | Unit price |',
  '|------|---------:|-----------:|',
  '{{#each items}}',
  '| {{description}} | {{quantity}} | {{formatCurrency unit_price ../currency}} |',
  '{{/each}}',
  '',
  '- Subtotal: {{formatCurrency totals.subtotal currency}}',
  '- Tax: {{formatCurrency totals.tax currency}}',
  '- **Total: {{formatCurrency totals.total currency}}**',
  '',
  '{{#if notes}}',
  '> {{notes}}',
  '{{/if}}',
  '',
  'Questions? Write to [{{contact}}](mailto:{{contact}}).',
  '',
].join('\n');

export const INVOICE_DATA = {
  number: 'INV-2024-0042',
  issued_at: '2024-03-01',
  currency: 'EUR',
  customer: { name: 'Ada <script>alert(1)</script> Ltd', address: { city: 'Lyon' }, vat_id: 'FR123' },
  items: [
    { description: 'Widget *deluxe*', quantity: 2, unit_price: 9.5 },
    { description: 'Gadget | spare', quantity: 1, unit_price: 20 },
  ],
  totals: { subtotal: 39, tax: 7.8, total: 46.8 },
  notes: 'Paid with thanks',
  contact: 'billing@example.com',
};
