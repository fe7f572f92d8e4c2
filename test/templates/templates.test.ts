import { beforeAll, expect, it } from 'vitest';
import { discoverFieldsSchema } from '../../src/features/templates/fields-schema.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BODY = '# Hello {{name}}\n\n{{#each items}}- {{this.label}}\n{{/each}}';

async function createTemplate(server: TestServer, key: string, body = BODY, name = 'Welcome') {
  const response = await server.request('POST', '/v1/templates', { key, body: { name, body } });
  expect(response.status).toBe(201);
  return response.body;
}

describeEachDialect('templates', (server) => {
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    ({ key, keyId } = await server().bootstrap('Templates'));
  });

  it('creates a draft with no version and audits it', async () => {
    const response = await server().request('POST', '/v1/templates', { key, body: { name: 'Welcome', body: BODY } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      name: 'Welcome',
      body: BODY,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      latest_version: null,
    });
    expect(response.headers.get('location')).toBe(`/v1/templates/${response.body.id}`);
    const fetched = await server().request('GET', `/v1/templates/${response.body.id}`, { key });
    expect(fetched.body).toEqual(response.body);
    const audit = await server().request('GET', `/v1/audit?target_id=${response.body.id}`, { key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({ action: 'template.created', target_type: 'template', actor_id: keyId, payload: { name: 'Welcome' } }),
    ]);
  });

  it('answers 422 with the line and column of a syntax error', async () => {
    const response = await server().request('POST', '/v1/templates', { key, body: { name: 'Broken', body: 'Hello\n{{#each items}}\n  {{name}}\n{{/if}}' } });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Handlebars locates a mismatched block at its name: `each` starts in column 4 of line 2.
    expect(response.body).toMatchObject({
      status: 422,
      line: 2,
      column: 4,
      errors: [{ pointer: '/body', message: "each doesn't match if (line 2, column 4)" }],
    });

    const parse = await server().request('POST', '/v1/templates', { key, body: { name: 'Broken', body: 'ok\n\nDear {{name}, hi' } });
    expect(parse.status).toBe(422);
    expect(parse.body).toMatchObject({
      line: 3,
      column: 12,
      errors: [{ pointer: '/body', message: expect.stringMatching(/^Parse error.*\(line 3, column 12\)$/) }],
    });
  });

  it('rejects unknown helpers and undefined partials when the body is saved', async () => {
    const helper = await server().request('POST', '/v1/templates', { key, body: { name: 'x', body: 'Total\n  {{formatMoney total}}' } });
    expect(helper.status).toBe(422);
    expect(helper.body).toMatchObject({ line: 2, column: 3, errors: [{ pointer: '/body', message: 'unknown helper formatMoney (line 2, column 3)' }] });
    const partial = await server().request('POST', '/v1/templates', { key, body: { name: 'x', body: '{{> footer}}' } });
    expect(partial.status).toBe(422);
    expect(partial.body.errors[0].message).toMatch(/partial "footer" is not defined/);
    const decorator = await server().request('POST', '/v1/templates', { key, body: { name: 'x', body: 'a\n {{*track}}' } });
    expect(decorator.body).toMatchObject({ status: 422, line: 2, column: 2 });
    const inline = await server().request('POST', '/v1/templates', {
      key,
      body: { name: 'x', body: '{{#*inline "footer"}}Bye {{name}}{{/inline}}{{> footer}}' },
    });
    expect(inline.status).toBe(201);
  });

  it('validates the request body with pointers', async () => {
    const missing = await server().request('POST', '/v1/templates', { key, body: { body: 'x' } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ pointer: '/name', message: 'is required' }]);
    const empty = await server().request('PATCH', `/v1/templates/${(await createTemplate(server(), key)).id}`, { key, body: {} });
    expect(empty.status).toBe(422);
  });

  it('edits name and body separately; a no-op edit records nothing; a bad body leaves the draft as it was', async () => {
    const template = await createTemplate(server(), key);
    const renamed = await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', body: BODY });
    const edited = await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { body: 'Hi {{first_name}}' } });
    expect(edited.body).toMatchObject({ name: 'Renamed', body: 'Hi {{first_name}}' });
    expect(Date.parse(edited.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(template.updated_at));
    const same = await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { name: 'Renamed' } });
    expect(same.status).toBe(200);
    const broken = await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { body: '{{#if x}}' } });
    expect(broken.status).toBe(422);
    expect((await server().request('GET', `/v1/templates/${template.id}`, { key })).body.body).toBe('Hi {{first_name}}');
    const audit = await server().request('GET', `/v1/audit?target_id=${template.id}`, { key });
    expect(audit.body.data.map((entry: any) => [entry.action, entry.payload.changed])).toEqual([
      ['template.updated', ['body']],
      ['template.updated', ['name']],
      ['template.created', undefined],
    ]);
  });

  it('freezes versions v1, v2 capturing body and fields schema together', async () => {
    const template = await createTemplate(server(), key);
    const first = await server().request('POST', `/v1/templates/${template.id}/versions`, { key });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/v1/templates/${template.id}/versions/v1`);
    expect(first.body).toEqual({
      template_id: template.id,
      label: 'v1',
      body_snapshot: BODY,
      fields_schema: discoverFieldsSchema(BODY),
      created_at: expect.stringMatching(ISO),
    });
    await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { body: 'Bye {{name}}' } });
    const second = await server().request('POST', `/v1/templates/${template.id}/versions`, { key });
    expect(second.body).toMatchObject({ label: 'v2', body_snapshot: 'Bye {{name}}', fields_schema: discoverFieldsSchema('Bye {{name}}') });
    expect((await server().request('GET', `/v1/templates/${template.id}`, { key })).body.latest_version).toBe('v2');

    const list = await server().request('GET', `/v1/templates/${template.id}/versions`, { key });
    expect(list.body).toEqual({ data: [first.body, second.body], next_cursor: null });
    const page = await server().request('GET', `/v1/templates/${template.id}/versions?limit=1`, { key });
    expect(page.body.data.map((v: any) => v.label)).toEqual(['v1']);
    const next = await server().request('GET', `/v1/templates/${template.id}/versions?limit=1&cursor=${page.body.next_cursor}`, { key });
    expect(next.body).toEqual({ data: [second.body], next_cursor: null });
    const badCursor = await server().request('GET', `/v1/templates/${template.id}/versions?cursor=nope`, { key });
    expect(badCursor.status).toBe(400);
    expect((await server().request('GET', `/v1/templates/${template.id}/versions/v1`, { key })).body).toEqual(first.body);
    for (const label of ['v3', 'latest', 'v01']) {
      expect((await server().request('GET', `/v1/templates/${template.id}/versions/${label}`, { key })).status).toBe(404);
    }
    const audit = await server().request('GET', `/v1/audit?target_id=${template.id}&action=template_version.created`, { key });
    expect(audit.body.data.map((entry: any) => entry.payload)).toEqual([{ label: 'v2' }, { label: 'v1' }]);
  });

  it('keeps versions unchanged after edits and deletion, and answers 404 for the deleted draft', async () => {
    const template = await createTemplate(server(), key);
    const v1 = (await server().request('POST', `/v1/templates/${template.id}/versions`, { key })).body;
    await server().request('PATCH', `/v1/templates/${template.id}`, { key, body: { name: 'Changed', body: 'Completely {{different}}' } });
    expect((await server().request('GET', `/v1/templates/${template.id}/versions/v1`, { key })).body).toEqual(v1);

    const deleted = await server().request('DELETE', `/v1/templates/${template.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    for (const [method, body] of [['GET'], ['PATCH', { name: 'again' }], ['DELETE']] as const) {
      const response = await server().request(method, `/v1/templates/${template.id}`, { key, body });
      expect(response.status).toBe(404);
    }
    expect((await server().request('POST', `/v1/templates/${template.id}/versions`, { key })).status).toBe(404);
    expect((await server().request('GET', `/v1/templates/${template.id}/versions/v1`, { key })).body).toEqual(v1);
    expect((await server().request('GET', `/v1/templates/${template.id}/versions`, { key })).body.data).toEqual([v1]);
    const listed = await server().request('GET', '/v1/templates?limit=200', { key });
    expect(listed.body.data.map((t: any) => t.id)).not.toContain(template.id);
    const audit = await server().request('GET', `/v1/audit?target_id=${template.id}&action=template.deleted`, { key });
    expect(audit.body.data).toEqual([expect.objectContaining({ payload: { name: 'Changed', versions: 1 } })]);
  });

  it('answers 404 for the versions of a deleted template that never froze one', async () => {
    const template = await createTemplate(server(), key);
    expect((await server().request('GET', `/v1/templates/${template.id}/versions`, { key })).body).toEqual({ data: [], next_cursor: null });
    await server().request('DELETE', `/v1/templates/${template.id}`, { key });
    expect((await server().request('GET', `/v1/templates/${template.id}/versions`, { key })).status).toBe(404);
  });

  it('labels concurrent freezes v1..v20 without gaps or duplicates', async () => {
    const template = await createTemplate(server(), key);
    const responses = await Promise.all(Array.from({ length: 20 }, () => server().request('POST', `/v1/templates/${template.id}/versions`, { key })));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    const labels = responses.map((r) => r.body.label).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
    expect(labels).toEqual(Array.from({ length: 20 }, (_, i) => `v${i + 1}`));
    const list = await server().request('GET', `/v1/templates/${template.id}/versions?limit=200`, { key });
    expect(list.body.data.map((v: any) => v.label)).toEqual(labels);
    expect((await server().request('GET', `/v1/templates/${template.id}`, { key })).body.latest_version).toBe('v20');
  });

  it('lists live templates oldest first with a cursor', async () => {
    const { key: own } = await server().bootstrap('Listing');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createTemplate(server(), own, `T${i}`, `T${i}`)).id);
    const first = await server().request('GET', '/v1/templates?limit=2', { key: own });
    expect(first.body.data.map((t: any) => t.id)).toEqual(ids.slice(0, 2));
    const second = await server().request('GET', `/v1/templates?limit=2&cursor=${first.body.next_cursor}`, { key: own });
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2], name: 'T2' })], next_cursor: null });
  });

  it('needs a server key: 401 without one, 403 for a client key', async () => {
    const template = await createTemplate(server(), key);
    const client = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'browser', kind: 'client' } })).body.key;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/v1/templates'],
      ['POST', '/v1/templates', { name: 'x', body: 'x' }],
      ['GET', `/v1/templates/${template.id}`],
      ['PATCH', `/v1/templates/${template.id}`, { name: 'x' }],
      ['DELETE', `/v1/templates/${template.id}`],
      ['POST', `/v1/templates/${template.id}/versions`],
      ['GET', `/v1/templates/${template.id}/versions`],
      ['GET', `/v1/templates/${template.id}/versions/v1`],
    ];
    for (const [method, path, body] of calls) {
      expect((await server().request(method, path, { body })).status).toBe(401);
      const forbidden = await server().request(method, path, { key: client, body });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.type).toMatch(/forbidden/);
    }
    expect((await server().request('GET', `/v1/templates/${template.id}`, { key })).status).toBe(200);
  });

  it("answers 404 for another workspace's templates and versions", async () => {
    const template = await createTemplate(server(), key);
    await server().request('POST', `/v1/templates/${template.id}/versions`, { key });
    const { key: other } = await server().bootstrap('Other');
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/v1/templates/${template.id}`],
      ['PATCH', `/v1/templates/${template.id}`, { name: 'mine now' }],
      ['DELETE', `/v1/templates/${template.id}`],
      ['POST', `/v1/templates/${template.id}/versions`],
      ['GET', `/v1/templates/${template.id}/versions`],
      ['GET', `/v1/templates/${template.id}/versions/v1`],
    ];
    for (const [method, path, body] of calls) expect((await server().request(method, path, { key: other, body })).status).toBe(404);
    expect((await server().request('GET', '/v1/templates', { key: other })).body.data).toEqual([]);
    const still = await server().request('GET', `/v1/templates/${template.id}`, { key });
    expect(still.body).toMatchObject({ name: 'Welcome', latest_version: 'v1' });
  });
});
