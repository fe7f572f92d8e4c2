import type { BenchServer, Scenario } from '../lib/harness.js';

/** A realistic invoice: headings, a 15-line table, helpers for dates and money, a condition. */
export const INVOICE_BODY = [
  '# Invoice {{number}}',
  '',
  '**{{seller.name}}** · {{seller.address}} · VAT {{seller.vat_id}}',
  '',
  'Issued {{formatDate issued_at "D MMMM YYYY"}}, due {{formatDate due_at "D MMMM YYYY"}}.',
  '',
  '## Bill to',
  '',
  '{{customer.name}}  ',
  '{{customer.address.line1}}  ',
  '{{customer.address.postcode}} {{customer.address.city}}, {{uppercase customer.address.country}}',
  '{{#if customer.vat_id}}',
  '',
  'VAT number: {{customer.vat_id}}',
  '{{/if}}',
  '',
  '## Items',
  '',
  '| # | Description | Quantity | Unit price | Amount |',
  '|--:|-------------|---------:|-----------:|-------:|',
  '{{#each items}}',
  '| {{sku}} | {{description}} | {{formatNumber quantity}} | {{formatCurrency unit_price ../currency}} | {{formatCurrency amount ../currency}} |',
  '{{/each}}',
  '',
  '- Subtotal: {{formatCurrency totals.subtotal currency}}',
  '- VAT ({{formatNumber totals.tax_rate 0}}%): {{formatCurrency totals.tax currency}}',
  '- **Total due: {{formatCurrency totals.total currency}}**',
  '',
  '{{#if notes}}',
  '> {{notes}}',
  '{{/if}}',
  '',
  'Pay by bank transfer to {{seller.iban}} quoting *{{number}}*, or online at [{{payment_url}}]({{payment_url}}).',
  '',
].join('\n');

const items = Array.from({ length: 15 }, (_, index) => {
  const quantity = (index % 4) + 1;
  const unitPrice = 12.5 + index * 3.25;
  return {
    sku: `SKU-${1000 + index}`,
    description: `Consulting package ${index + 1} <standard>`,
    quantity,
    unit_price: unitPrice,
    amount: quantity * unitPrice,
  };
});
const subtotal = items.reduce((sum, item) => sum + item.amount, 0);

export const INVOICE_DATA = {
  number: 'INV-2024-0042',
  issued_at: '2024-03-01',
  due_at: '2024-03-31',
  currency: 'EUR',
  seller: { name: 'Verdict Consulting SAS', address: '12 rue de la Paix, 75002 Paris', vat_id: 'FR12345678901', iban: 'FR76 3000 6000 0112 3456 7890 189' },
  customer: {
    name: 'Ada Lovelace & Co',
    address: { line1: '1 Analytical Engine Way', postcode: '69001', city: 'Lyon', country: 'fr' },
    vat_id: 'FR98765432109',
  },
  items,
  totals: { subtotal, tax_rate: 20, tax: subtotal * 0.2, total: subtotal * 1.2 },
  notes: 'Thank you for your business!',
  payment_url: 'https://pay.example.com/inv/INV-2024-0042',
};

async function api<T>(server: BenchServer, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

function createRender(name: string, formats: string[]): Scenario {
  return {
    name,
    description: `POST /v1/renders of a frozen 15-line invoice as ${formats.join('+')} (validate data, insert, enqueue, audit; 202). The embedded worker renders meanwhile`,
    async prepare(server) {
      const template = await api<{ id: string }>(server, 'POST', '/v1/templates', { name: 'Invoice', body: INVOICE_BODY });
      await api(server, 'POST', `/v1/templates/${template.id}/versions`);
      return {
        method: 'POST',
        path: '/v1/renders',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ template_id: template.id, formats, data: INVOICE_DATA }),
      };
    },
  };
}

export const createHtmlRender = createRender('renders.create.html', ['html']);
export const createPdfRender = createRender('renders.create.pdf', ['pdf']);
