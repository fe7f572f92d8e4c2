import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { FIELDS_SCHEMA_DIALECT, discoverFieldsSchema } from './fields-schema.js';
import type { JSONSchema } from './fields-schema.js';
import { TemplateSyntaxError } from './syntax.js';

// Schema builders so that each expectation below still spells out the exact schema.
const VALUE: JSONSchema = { type: ['string', 'number', 'boolean'] };
const OPTIONAL_VALUE: JSONSchema = { type: ['string', 'number', 'boolean', 'null'] };
const ANY: JSONSchema = {};

function object(properties: Record<string, JSONSchema>, required: string[] = []): JSONSchema {
  const schema: JSONSchema = { additionalProperties: true, properties, type: 'object' };
  if (required.length > 0) schema.required = required;
  return schema;
}

function nullable(schema: JSONSchema): JSONSchema {
  return { ...schema, type: [schema.type as 'object' | 'array', 'null'] };
}

function array(items: JSONSchema): JSONSchema {
  return { items, type: 'array' };
}

function root(properties: Record<string, JSONSchema>, required: string[] = []): JSONSchema {
  return { $schema: FIELDS_SCHEMA_DIALECT, ...object(properties, required) };
}

describe('discoverFieldsSchema: fields and paths', () => {
  it('has no fields for plain text', () => {
    expect(discoverFieldsSchema('Hello')).toEqual(root({}));
    expect(discoverFieldsSchema('')).toEqual(root({}));
  });

  it('makes printed fields required values', () => {
    expect(discoverFieldsSchema('Dear {{name}} <{{{ email }}}>')).toEqual(root({ email: VALUE, name: VALUE }, ['email', 'name']));
  });

  it('nests dotted paths, slash paths and literal segments', () => {
    expect(discoverFieldsSchema('{{a.b.c}} {{a/d}} {{[first name]}} {{this.e}} {{./f}}')).toEqual(
      root(
        {
          a: object({ b: object({ c: VALUE }, ['c']), d: VALUE }, ['b', 'd']),
          e: VALUE,
          f: VALUE,
          'first name': VALUE,
        },
        ['a', 'e', 'f', 'first name'],
      ),
    );
  });

  it('turns a printed field into an object when properties are read from it', () => {
    expect(discoverFieldsSchema('{{customer}} {{customer.name}}')).toEqual(root({ customer: object({ name: VALUE }, ['name']) }, ['customer']));
  });

  it('ignores literals in statement position', () => {
    expect(discoverFieldsSchema('{{"literal"}} {{true}} {{42}} {{null}}')).toEqual(root({}));
  });

  it('ignores the root context itself and ../ above the root', () => {
    expect(discoverFieldsSchema('{{this}} {{../x}} {{#each this}}{{y}}{{/each}} {{#with this}}{{z}}{{/with}}')).toEqual(root({ z: VALUE }, ['z']));
  });

  it('keeps a field named __proto__ as a plain property', () => {
    const schema = discoverFieldsSchema('{{__proto__.x}}');
    expect(Object.keys(schema.properties ?? {})).toEqual(['__proto__']);
    expect(JSON.stringify(schema)).toContain('"__proto__":{"additionalProperties":true');
  });
});

describe('discoverFieldsSchema: helpers, partials and data variables', () => {
  it('reads helper arguments as fields of any type, not the helper or literals', () => {
    expect(discoverFieldsSchema('{{formatDate issued_at "short" tz=timezone locale="fr"}}')).toEqual(
      root({ issued_at: ANY, timezone: ANY }, ['issued_at', 'timezone']),
    );
  });

  it('reads sub-expression arguments, and a bare sub-expression is a call', () => {
    expect(discoverFieldsSchema('{{money (multiply qty line.price) currency=(upper cur)}} {{formatDate (now)}}')).toEqual(
      root({ cur: ANY, line: object({ price: ANY }, ['price']), qty: ANY }, ['cur', 'line', 'qty']),
    );
  });

  it('treats helper arguments that are also printed as values', () => {
    expect(discoverFieldsSchema('{{formatDate due}} ({{due}})')).toEqual(root({ due: VALUE }, ['due']));
  });

  it('does not report partial names; reads partial context and hash arguments', () => {
    expect(discoverFieldsSchema('{{> footer}} {{> address customer.address title=heading note="x"}}')).toEqual(
      root({ customer: object({ address: ANY }, ['address']), heading: ANY }, ['customer', 'heading']),
    );
  });

  it('reads the arguments of a dynamic partial name', () => {
    expect(discoverFieldsSchema('{{> (partialFor kind) }}')).toEqual(root({ kind: ANY }, ['kind']));
  });

  it('makes partial-block and inline-partial bodies optional', () => {
    const body = '{{#> layout title=title}}{{fallback}}{{/layout}}{{#*inline "row"}}{{cell}}{{/inline}}';
    expect(discoverFieldsSchema(body)).toEqual(root({ cell: OPTIONAL_VALUE, fallback: OPTIONAL_VALUE, title: ANY }, ['title']));
  });

  it('ignores @data variables but reads @root paths from the root', () => {
    const body = '{{#each items}}{{@index}} {{@key}} {{@first}} {{@last}} {{@root.company.name}}{{/each}} {{@root}}';
    expect(discoverFieldsSchema(body)).toEqual(root({ company: object({ name: VALUE }, ['name']), items: array(ANY) }, ['company', 'items']));
  });
});

describe('discoverFieldsSchema: #each and #with', () => {
  it('makes #each targets arrays of objects read through this, ./ and bare names', () => {
    expect(discoverFieldsSchema('{{#each lines}}{{this.sku}} {{./qty}} {{price.amount}}{{/each}}')).toEqual(
      root(
        {
          lines: array(object({ price: object({ amount: VALUE }, ['amount']), qty: VALUE, sku: VALUE }, ['price', 'qty', 'sku'])),
        },
        ['lines'],
      ),
    );
  });

  it('makes items printed with {{this}} values', () => {
    expect(discoverFieldsSchema('{{#each tags}}<li>{{this}}</li>{{/each}}')).toEqual(root({ tags: array(VALUE) }, ['tags']));
  });

  it('resolves block params to the item; the index param is not a field', () => {
    const body = '{{#each lines as |line i|}}{{i}} {{line.sku}} {{line}}{{/each}}';
    expect(discoverFieldsSchema(body)).toEqual(root({ lines: array(object({ sku: VALUE }, ['sku'])) }, ['lines']));
  });

  it('lets block params reach an outer item from a nested block', () => {
    const body = '{{#each orders as |order|}}{{#each order.lines}}{{sku}} {{order.id}}{{/each}}{{/each}}';
    expect(discoverFieldsSchema(body)).toEqual(
      root({ orders: array(object({ id: VALUE, lines: array(object({ sku: VALUE }, ['sku'])) }, ['id', 'lines'])) }, ['orders']),
    );
  });

  it('resolves ../ one context per #each and #with, not per #if', () => {
    const body = [
      '{{#each groups}}{{#each members}}',
      '{{name}} {{../label}} {{../../org}} {{#if active}}{{../label}}{{/if}}',
      '{{#with address}}{{city}} {{../name}} {{../../label}}{{/with}}',
      '{{/each}}{{/each}}',
    ].join('');
    const member = object({ active: ANY, address: object({ city: VALUE }, ['city']), name: VALUE }, ['address', 'name']);
    expect(discoverFieldsSchema(body)).toEqual(
      root({ groups: array(object({ label: VALUE, members: array(member) }, ['label', 'members'])), org: VALUE }, ['groups', 'org']),
    );
  });

  it('supports arrays of arrays', () => {
    expect(discoverFieldsSchema('{{#each rows}}{{#each this}}{{this}}{{/each}}{{/each}}')).toEqual(root({ rows: array(array(VALUE)) }, ['rows']));
  });

  it('keeps an #each target an array when its length or an index is read', () => {
    expect(discoverFieldsSchema('{{items.length}} {{#each items}}{{n}}{{/each}} {{items.[0].n}}')).toEqual(
      root({ items: array(object({ n: VALUE }, ['n'])) }, ['items']),
    );
  });

  it('reads an #each else branch in the outer context, optionally', () => {
    expect(discoverFieldsSchema('{{#each items}}{{n}}{{else}}{{emptyText}}{{/each}}')).toEqual(
      root({ emptyText: OPTIONAL_VALUE, items: array(object({ n: VALUE }, ['n'])) }, ['items']),
    );
  });

  it('does not name the items of #each over a helper result', () => {
    expect(discoverFieldsSchema('{{#each (sortBy items "name")}}{{name}} {{../title}}{{/each}}')).toEqual(
      root({ items: ANY, title: VALUE }, ['items', 'title']),
    );
  });

  it('scopes #with into an object; block params and else branches follow Handlebars', () => {
    const body = '{{#with customer as |c|}}{{name}} {{c.email}} {{../id}}{{else}}{{guest}}{{/with}}';
    expect(discoverFieldsSchema(body)).toEqual(
      root({ customer: object({ email: VALUE, name: VALUE }, ['email', 'name']), guest: OPTIONAL_VALUE, id: VALUE }, ['customer', 'id']),
    );
  });

  it('makes a #with target an object even when nothing is read from it', () => {
    expect(discoverFieldsSchema('{{#with meta}}static{{/with}}')).toEqual(root({ meta: object({}) }, ['meta']));
  });
});

describe('discoverFieldsSchema: conditionals', () => {
  it('accepts anything for a field used only as a condition, and does not require it', () => {
    expect(discoverFieldsSchema('{{#if paid}}Paid{{/if}}{{#unless draft}}Final{{/unless}}')).toEqual(root({ draft: ANY, paid: ANY }));
  });

  it('makes fields under #if/#unless, in program or else, optional and nullable', () => {
    const body = '{{#if notes}}{{notes}}{{else}}{{fallback}}{{/if}}{{#unless hide}}{{extra.text}}{{/unless}}';
    expect(discoverFieldsSchema(body)).toEqual(
      root({
        extra: nullable(object({ text: OPTIONAL_VALUE })),
        fallback: OPTIONAL_VALUE,
        hide: ANY,
        notes: OPTIONAL_VALUE,
      }),
    );
  });

  it('requires a field used unconditionally anywhere, even if also used under #if', () => {
    expect(discoverFieldsSchema('{{#if total}}{{total}}{{/if}} Total: {{total}}')).toEqual(root({ total: VALUE }, ['total']));
  });

  it('walks else-if chains as conditional', () => {
    expect(discoverFieldsSchema('{{#if a}}{{x}}{{else if b}}{{y}}{{else}}{{z}}{{/if}}')).toEqual(
      root({ a: ANY, b: ANY, x: OPTIONAL_VALUE, y: OPTIONAL_VALUE, z: OPTIONAL_VALUE }),
    );
  });

  it('makes helper arguments in a condition optional', () => {
    expect(discoverFieldsSchema('{{#if (eq status "paid")}}{{paid_at}}{{/if}}')).toEqual(root({ paid_at: OPTIONAL_VALUE, status: ANY }));
  });

  it('makes a guarded object nullable with optional properties', () => {
    expect(discoverFieldsSchema('{{#if customer}}{{customer.name}}{{/if}}')).toEqual(root({ customer: nullable(object({ name: OPTIONAL_VALUE })) }));
  });

  it('keeps requiredness inside an optional #each relative to the item', () => {
    expect(discoverFieldsSchema('{{#if items}}{{#each items}}{{sku}}{{#if note}}{{note}}{{/if}}{{/each}}{{/if}}')).toEqual(
      root({ items: nullable(array(object({ note: OPTIONAL_VALUE, sku: VALUE }, ['sku']))) }),
    );
  });

  it('treats ../ references under #if as optional at their own level', () => {
    expect(discoverFieldsSchema('{{#each items}}{{#if discount}}{{../promo}}{{/if}}{{/each}}')).toEqual(
      root({ items: array(object({ discount: ANY })), promo: OPTIONAL_VALUE }, ['items']),
    );
  });

  it('treats unknown block helpers as calls whose bodies may not render', () => {
    const body = '{{#ifEquals status "paid"}}{{paid_at}}{{else}}{{due_at}}{{/ifEquals}}{{#repeat n as |k|}}{{k.x}}{{/repeat}}';
    expect(discoverFieldsSchema(body)).toEqual(root({ due_at: OPTIONAL_VALUE, n: ANY, paid_at: OPTIONAL_VALUE, status: ANY }, ['n', 'status']));
  });

  it('treats a bare block as a section over an optional field', () => {
    expect(discoverFieldsSchema('{{#vip}}Gold {{level}}{{/vip}}')).toEqual(root({ level: OPTIONAL_VALUE, vip: ANY }));
  });
});

describe('discoverFieldsSchema: output', () => {
  it('sorts keys at every level so that equal templates give byte-equal schemas', () => {
    expect(JSON.stringify(discoverFieldsSchema('{{b}}{{#if z}}{{z}}{{/if}}{{a.y}}{{a.x}}'))).toBe(
      '{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":true,' +
        '"properties":{"a":{"additionalProperties":true,"properties":{"x":{"type":["string","number","boolean"]},' +
        '"y":{"type":["string","number","boolean"]}},"required":["x","y"],"type":"object"},' +
        '"b":{"type":["string","number","boolean"]},"z":{"type":["string","number","boolean","null"]}},' +
        '"required":["a","b"],"type":"object"}',
    );
    expect(JSON.stringify(discoverFieldsSchema('{{a.x}}{{#if z}}{{z}}{{/if}}{{b}}{{a.y}}'))).toBe(
      JSON.stringify(discoverFieldsSchema('{{b}}{{#if z}}{{z}}{{/if}}{{a.y}}{{a.x}}')),
    );
  });

  it('throws a TemplateSyntaxError for a body that does not parse', () => {
    expect(() => discoverFieldsSchema('{{#each items}}')).toThrow(TemplateSyntaxError);
  });
});

describe('discoverFieldsSchema: a realistic invoice', () => {
  const invoice = [
    '<h1>Invoice {{number}}</h1>',
    '<p>Issued {{formatDate issued_at "YYYY-MM-DD"}}</p>',
    '<p>{{customer.name}}<br>{{customer.address.line1}}, {{customer.address.city}}</p>',
    '{{#if customer.vat_id}}<p>VAT {{customer.vat_id}}</p>{{/if}}',
    '<table>',
    '{{#each items}}',
    '  <tr><td>{{@index}}</td><td>{{description}}</td><td>{{quantity}}</td>',
    '  <td>{{unit_price}} {{../currency}}</td></tr>',
    '{{else}}',
    '  <tr><td>No items</td></tr>',
    '{{/each}}',
    '</table>',
    '<p>Subtotal {{totals.subtotal}} {{currency}}</p>',
    '<p>Tax {{totals.tax}}</p>',
    '<p>Total {{totals.total}} {{currency}}</p>',
    '{{#if notes}}<p class="notes">{{notes}}</p>{{/if}}',
    '{{> footer}}',
  ].join('\n');

  const expected = root(
    {
      currency: VALUE,
      customer: object(
        {
          address: object({ city: VALUE, line1: VALUE }, ['city', 'line1']),
          name: VALUE,
          vat_id: OPTIONAL_VALUE,
        },
        ['address', 'name'],
      ),
      issued_at: ANY,
      items: array(object({ description: VALUE, quantity: VALUE, unit_price: VALUE }, ['description', 'quantity', 'unit_price'])),
      notes: OPTIONAL_VALUE,
      number: VALUE,
      totals: object({ subtotal: VALUE, tax: VALUE, total: VALUE }, ['subtotal', 'tax', 'total']),
    },
    ['currency', 'customer', 'issued_at', 'items', 'number', 'totals'],
  );

  const good = {
    number: 'INV-2024-0042',
    issued_at: '2024-03-01',
    currency: 'EUR',
    customer: { name: 'Ada Ltd', address: { line1: '1 Main St', city: 'Lyon' } },
    items: [
      { description: 'Widget', quantity: 2, unit_price: '9.50' },
      { description: 'Gadget', quantity: 1, unit_price: 20, sku: 'extra data is fine' },
    ],
    totals: { subtotal: 39, tax: 7.8, total: 46.8 },
    notes: null,
  };

  function validator() {
    // Strict mode turns Ajv's schema warnings into errors, so this also proves the schema is clean.
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats.default(ajv);
    return ajv.compile(discoverFieldsSchema(invoice));
  }

  it('discovers the exact schema', () => {
    expect(discoverFieldsSchema(invoice)).toEqual(expected);
  });

  it('accepts good data, with or without the optional fields', () => {
    const validate = validator();
    expect(validate(good)).toBe(true);
    expect(validate({ ...good, notes: 'Thanks!', customer: { ...good.customer, vat_id: 'FR123' } })).toBe(true);
    expect(validate({ ...good, items: [] })).toBe(true);
  });

  it('rejects data missing a required field, with a pointer to the object that lacks it', () => {
    const validate = validator();
    const { name: _name, ...customer } = good.customer;
    expect(validate({ ...good, customer })).toBe(false);
    expect(validate.errors).toEqual([expect.objectContaining({ instancePath: '/customer', keyword: 'required', params: { missingProperty: 'name' } })]);
  });

  it('points into the array item that lacks a field and at values of the wrong type', () => {
    const validate = validator();
    const items = [good.items[0], { description: 'No price', quantity: 1 }];
    expect(validate({ ...good, items, totals: { ...good.totals, total: { amount: 1 } } })).toBe(false);
    expect(validate.errors?.map((error) => [error.instancePath, error.keyword])).toEqual([
      ['/items/1', 'required'],
      ['/totals/total', 'type'],
    ]);
  });

  it('renders with Handlebars from data the schema accepts', () => {
    const handlebars = Handlebars.create();
    handlebars.registerHelper('formatDate', (value: unknown) => `[${String(value)}]`);
    handlebars.registerPartial('footer', '<footer>Thank you</footer>');
    const html = handlebars.compile(invoice, { strict: true })(good);
    expect(html).toContain('Issued [2024-03-01]');
    expect(html).toContain('<td>9.50 EUR</td>');
    expect(html).toContain('Total 46.8 EUR');
    expect(html).toContain('<footer>Thank you</footer>');
  });
});
