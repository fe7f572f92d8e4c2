import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';

// Issue #31: a property-based sweep over every operation in openapi.json. Bodies that violate the
// operation's schema (wrong types, unknown fields, missing fields) or that no route accepts
// (non-finite numbers, lone surrogates, U+0000, bytes that are not UTF-8), unicode-edge text, and
// query values of the wrong kind must each get a problem (application/problem+json), never a 5xx,
// and change nothing (the audit log, where every mutation leaves an entry, stays as it was).

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  body: Schema | undefined;
  query: Array<{ name: string; schema: Schema }>;
}

const OPENAPI = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> }; parameters?: Array<{ in: string; name: string; schema: Schema }> }>
  >;
};

// A well-formed id of nothing: path ids never name a record, so no handler can change one.
const ABSENT_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

function operations(workspaceId: string): Operation[] {
  const fill = (template: string) =>
    template.replace(/\{(\w+)\}/g, (_all, name: string) =>
      name === 'workspace_id' ? workspaceId : name === 'format' ? 'html' : name === 'id' ? ABSENT_ID : `fuzz-${name}`,
    );
  return Object.entries(OPENAPI.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: fill(template),
      body: operation.requestBody?.content?.['application/json']?.schema,
      query: (operation.parameters ?? []).filter((parameter) => parameter.in === 'query'),
    })),
  );
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

/** The JSON types a schema admits, or null when it admits anything. */
function admittedTypes(schema: Schema | undefined): Set<JsonType> | null {
  if (!schema) return null;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const all = new Set<JsonType>();
    for (const branch of branches as Schema[]) {
      const types = admittedTypes(branch);
      if (types === null) return null;
      types.forEach((type) => all.add(type));
    }
    return all;
  }
  if (schema.type) return new Set((Array.isArray(schema.type) ? schema.type : [schema.type]) as JsonType[]);
  if (schema.enum) return new Set((schema.enum as unknown[]).map((value) => (value === null ? 'null' : (typeof value as JsonType))));
  return null;
}

const SAMPLES: Array<[JsonType, unknown]> = [
  ['string', 'fuzz'],
  ['number', 12.5],
  ['boolean', true],
  ['null', null],
  ['array', []],
  ['object', {}],
];

/** Values of a JSON type the schema does not admit (12.5 is no integer); none when it admits anything. */
function wrongValues(schema: Schema | undefined): unknown[] {
  const types = admittedTypes(schema);
  if (types === null) return [];
  return SAMPLES.filter(([type]) => !types.has(type)).map(([, value]) => value);
}

// Text that no route accepts, whatever the field: it is refused by the JSON parser itself.
const REFUSED_EVERYWHERE = ['1e309', '-1e999', `${'9'.repeat(320)}`, '"a\\ud800b"', '"\\udfff"', '"a\\u0000b"'];
// Text a field may well accept: it must still never cause a 5xx.
const UNICODE_EDGES = ['', ' ', '\u200b', '\u202egnp.exe', '\ufeffbom', '\uffff', 'e\u0301', '😀'.repeat(300), 'ﷺ', '\u0085', 'x'.repeat(5000), '𝒳\t\n\r'];

/** A body the operation's schema refuses (or that no route accepts), as raw text or bytes. */
function invalidBody(schema: Schema | undefined): fc.Arbitrary<string | Buffer> {
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, Schema>);
  const options: Array<fc.Arbitrary<string | Buffer>> = [
    // Anywhere in the body, under any name: refused by the parser.
    fc
      .tuple(fc.constantFrom(...REFUSED_EVERYWHERE), fc.constantFrom('x', ...properties.map(([name]) => name)))
      .map(([raw, name]) => `{${JSON.stringify(name)}:${raw}}`),
    fc.constantFrom(...REFUSED_EVERYWHERE).map((raw) => `{"nested":{"list":[1,${raw}]}}`),
    fc.constantFrom('x', 'é', '{"a":"b"}').map((text) => Buffer.concat([Buffer.from(`{"name":"${text}`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])),
  ];
  if (schema) {
    const wrongWhole = wrongValues(schema);
    if (wrongWhole.length > 0) options.push(fc.constantFrom(...wrongWhole).map((value) => JSON.stringify(value)));
    const typed = properties.filter(([, property]) => wrongValues(property).length > 0);
    if (typed.length > 0) {
      options.push(
        fc.constantFrom(...typed).chain(([name, property]) => fc.constantFrom(...wrongValues(property)).map((value) => JSON.stringify({ [name]: value }))),
      );
    }
    if (schema.additionalProperties === false) {
      options.push(
        fc
          .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...UNICODE_EDGES))
          .map(([name, value]) => JSON.stringify({ [`__fuzz_${name}`]: value })),
      );
    }
    if ((schema.required ?? []).length > 0) {
      // Unicode-edge text in each field, the others missing: still refused, as missing.
      const fields = properties.length > 0 ? properties.map(([name]) => name) : ['x'];
      options.push(fc.tuple(fc.constantFrom(...fields), fc.constantFrom(...UNICODE_EDGES)).map(([name, value]) => JSON.stringify({ [name]: value })));
    }
  }
  return fc.oneof(...options);
}

/** A query value the parameter's schema refuses. */
function invalidQueryValue(schema: Schema): string | null {
  const types = admittedTypes(schema);
  if (schema.format === 'date-time') return '2024-12-31T23:59:60Z';
  if (schema.enum) return 'not-one-of-them';
  if (types?.has('integer') || types?.has('number')) return schema.maximum !== undefined ? String(schema.maximum + 1) : 'NaN';
  if (types?.has('boolean')) return 'maybe';
  if (schema.maxLength !== undefined) return 'x'.repeat(schema.maxLength + 1);
  if (schema.pattern !== undefined) return ' ';
  return null;
}

async function auditCount(server: TestServer, key: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: { body: { data: unknown[]; next_cursor: string | null } } = await server.request(
      'GET',
      `/v1/audit?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key },
    );
    count += page.body.data.length;
    cursor = page.body.next_cursor;
  } while (cursor);
  return count;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

async function send(server: TestServer, key: string, method: string, target: string, body?: string | Buffer): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(server.url + target, { method, headers, body });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

function expectRefusal(answer: Answer, label: string): void {
  expect(answer.status, `${label}: ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${label}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  expect(answer.contentType, label).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(answer.text) as { status: number; type: string; title: string };
  expect(problem.status, label).toBe(answer.status);
  expect(typeof problem.title, label).toBe('string');
}

const RUNS_PER_OPERATION = 10;

describeEachDialect('every operation in openapi.json, fuzzed (issue #31)', (server) => {
  let key: string;
  let workspaceId: string;
  beforeAll(async () => {
    ({ key, workspaceId } = await server().bootstrap('Fuzz'));
  });

  it('answers a problem, never a 5xx, to bodies the schema refuses or no route accepts, and changes nothing', async () => {
    const before = await auditCount(server(), key);
    let sent = 0;
    for (const operation of operations(workspaceId)) {
      if (operation.method === 'GET' || operation.method === 'HEAD') continue;
      // A route without a declared body ignores a merely wrong one, so it gets only parser refusals.
      const bodies = operation.body ? invalidBody(operation.body) : invalidBody(undefined);
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const answer = await send(server(), key, operation.method, operation.path, body);
          expectRefusal(answer, `${operation.method} ${operation.path} ${String(body).slice(0, 120)}`);
          sent += 1;
        }),
        { numRuns: RUNS_PER_OPERATION, seed: 31 },
      );
    }
    expect(sent).toBeGreaterThan(300);
    expect(await auditCount(server(), key)).toBe(before);
  });

  it('answers 400 to a query value of the wrong kind on every operation that reads one, and never a 5xx to unicode-edge values', async () => {
    const before = await auditCount(server(), key);
    for (const operation of operations(workspaceId)) {
      if (operation.method !== 'GET') continue;
      for (const { name, schema } of operation.query) {
        const wrong = invalidQueryValue(schema);
        if (wrong !== null)
          expectRefusal(await send(server(), key, 'GET', `${operation.path}?${name}=${encodeURIComponent(wrong)}`), `${operation.path}?${name}`);
        for (const edge of UNICODE_EDGES.slice(0, 8)) {
          const answer = await send(server(), key, 'GET', `${operation.path}?${name}=${encodeURIComponent(edge)}`);
          expect(answer.status, `${operation.path}?${name}=${JSON.stringify(edge)}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
          if (answer.status >= 400) expectRefusal(answer, `${operation.path}?${name}`);
        }
      }
    }
    expect(await auditCount(server(), key)).toBe(before);
  });

  it('never answers a 5xx to unicode-edge text or U+0000 in a path parameter, and changes nothing', async () => {
    const before = await auditCount(server(), key);
    for (const operation of operations(workspaceId)) {
      // Only paths with a parameter; the others name no record (ABSENT_ID stays absent).
      if (!/fuzz-|01ARZ3NDEKTSV4RRFFQ69G5FAV/.test(operation.path)) continue;
      for (const edge of ['\u0000', 'a\u0000b', '\uffff', '😀', '%', '..']) {
        const target = operation.path.replace(/fuzz-\w+|01ARZ3NDEKTSV4RRFFQ69G5FAV/, encodeURIComponent(edge).replace(/\./g, '%2E'));
        const answer = await send(server(), key, operation.method, target);
        expect(answer.status, `${operation.method} ${target}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
        if (answer.status >= 400) expectRefusal(answer, `${operation.method} ${target}`);
      }
    }
    expect(await auditCount(server(), key)).toBe(before);
  });

  it('answers 422 pointing at /url, never a 5xx, to URLs that pass the pattern but no URL parser accepts, on every operation whose body takes a url (issue #51)', async () => {
    const endpoint = await server().request('POST', '/v1/webhook-endpoints', { key, body: { url: 'https://hooks.example.com/fuzz', event_types: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const before = await auditCount(server(), key);
    const takingUrl = operations(workspaceId).filter((operation) => operation.body?.properties?.url?.pattern?.startsWith('^https?://'));
    expect(takingUrl.map((operation) => `${operation.method} ${operation.path.replace(ABSENT_ID, '{id}')}`)).toEqual(
      expect.arrayContaining(['POST /v1/webhook-endpoints', 'PATCH /v1/webhook-endpoints/{id}']),
    );
    const unparsable = fc
      .tuple(
        fc.constantFrom('http://', 'https://', 'https://user:S3cretPass@'),
        fc.constantFrom('[::1', 'x:99999', 'a:b:c', '%zz', 'xn--', 'ex%2Fample.com', '[::1%25lo]:1', 'h.example:0', '[', 'a%', '[fe80::1%25]', 'a:65536'),
        fc.string({ maxLength: 20 }).map((path) => `/${encodeURIComponent(path)}`),
      )
      .map((parts) => parts.join(''));
    for (const operation of takingUrl) {
      const path = operation.path.replace(ABSENT_ID, endpoint.body.id);
      const others = Object.fromEntries(
        ((operation.body?.required ?? []) as string[]).filter((name) => name !== 'url').map((name) => [name, name === 'event_types' ? ['*'] : 'fuzz']),
      );
      await fc.assert(
        fc.asyncProperty(unparsable, async (url) => {
          const answer = await send(server(), key, operation.method, path, JSON.stringify({ ...others, url }));
          expectRefusal(answer, `${operation.method} ${path} ${url}`);
          expect(answer.status, `${operation.method} ${path} ${url}`).toBe(422);
          expect(JSON.parse(answer.text).errors, url).toEqual([expect.objectContaining({ pointer: '/url' })]);
          expect(answer.text).not.toContain('S3cretPass');
        }),
        { numRuns: 40, seed: 51 },
      );
    }
    expect(await auditCount(server(), key)).toBe(before);
  });

  it('stores unicode-edge text exactly, or refuses it with a problem, in every name it keeps', async () => {
    const edges = fc.oneof(
      fc.constantFrom(...UNICODE_EDGES.filter((edge) => edge.length > 0 && edge.length <= 200)),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    );
    const routes: Array<[string, (text: string, n: number) => Record<string, unknown>]> = [
      ['/v1/environments', (text) => ({ name: text })],
      ['/v1/metrics', (text, n) => ({ key: `m-${n}`, name: text, event_key: 'e', kind: 'binary' })],
      ['/v1/segments', (text, n) => ({ key: `s-${n}`, name: text, rule: { attribute: text, op: 'eq', value: text } })],
      ['/v1/templates', (text) => ({ name: text, body: `{{x}} ${text}` })],
    ];
    let n = 0;
    for (const [route, bodyOf] of routes) {
      await fc.assert(
        fc.asyncProperty(edges, async (text) => {
          n += 1;
          const body = bodyOf(text, n);
          const created = await server().request('POST', route, { key, body });
          expect(created.status, `${route} ${JSON.stringify(text)}: ${created.text.slice(0, 200)}`).toBeLessThan(500);
          if (created.status >= 400) {
            expect(created.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            return;
          }
          const read = route === '/v1/environments' ? created : await server().request('GET', `${route}/${created.body.id}`, { key });
          expect(read.body.name).toBe(text);
        }),
        { numRuns: 8, seed: 31 },
      );
    }
  });
});
