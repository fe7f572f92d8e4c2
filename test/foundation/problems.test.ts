import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer } from '../support/server.js';

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
}

describeEachDialect('errors are RFC 9457 problems', (server) => {
  let key: string;
  beforeAll(async () => {
    key = (await server().bootstrap()).key;
  });

  it('answers 400 for malformed JSON and changes nothing', async () => {
    const before = await server().request('GET', '/v1/environments', { key });
    const response = await server().request('POST', '/v1/environments', {
      key,
      rawBody: '{"name": "Staging", "slug": ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(response, 400);
    expect(response.body.detail).toMatch(/not valid JSON/);
    const after = await server().request('GET', '/v1/environments', { key });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });

  it('answers 400 for an empty body declared as JSON on a route that takes a body', async () => {
    const response = await server().request('POST', '/v1/environments', { key, rawBody: '', headers: { 'content-type': 'application/json' } });
    expectProblem(response, 400);
    expect(response.body.type).toBe('https://verdict.dev/problems/malformed-request');
  });

  it('answers 404 for an unknown route, even without a key', async () => {
    const response = await server().request('GET', '/v1/nothing-here');
    expectProblem(response, 404);
    expect(response.body.detail).toContain('/v1/nothing-here');
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const response = await server().request('PUT', '/v1/environments', { key, body: {} });
    expectProblem(response, 405);
    expect(response.headers.get('allow')).toBe('GET, POST');
  });

  it('answers 413 for a body over the limit', async () => {
    const response = await server().request('POST', '/v1/environments', {
      key,
      body: { name: 'x'.repeat(2 * 1024 * 1024), slug: 'big' },
    });
    expectProblem(response, 413);
    expect(response.body.detail).toBe('the request body exceeds the limit of 1048576 bytes');
  });

  it('quotes the route’s own limit in a 413 where a route accepts more (event batches: 10 MiB)', async () => {
    const response = await server().request('POST', '/v1/events/batch', { key, body: { events: [{ event_key: 'x'.repeat(11 * 1024 * 1024) }] } });
    expectProblem(response, 413);
    expect(response.body.detail).toBe(`the request body exceeds the limit of ${10 * 1024 * 1024} bytes`);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const response = await server().request('POST', '/v1/environments', {
      key,
      rawBody: 'name=Staging',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(response, 415);
  });

  it('answers 422 with a pointer per invalid field', async () => {
    const response = await server().request('POST', '/v1/environments', {
      key,
      body: { name: '', slug: 'Not Valid', color: 'red' },
    });
    expectProblem(response, 422);
    const pointers = response.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['/color', '/name', '/slug']);
    for (const error of response.body.errors) expect(error.message).toEqual(expect.any(String));
  });

  it('names a missing field by its pointer', async () => {
    const response = await server().request('POST', '/v1/environments', { key, body: { name: 'Staging' } });
    expectProblem(response, 422);
    expect(response.body.errors).toEqual([{ pointer: '/slug', message: 'is required' }]);
  });

  it('answers 400 naming an invalid query parameter', async () => {
    const response = await server().request('GET', '/v1/audit?limit=500', { key });
    expectProblem(response, 400);
    expect(response.body.errors[0]).toMatchObject({ parameter: 'limit' });
  });

  it('echoes a safe X-Request-Id and generates one otherwise', async () => {
    const given = await server().request('GET', '/v1/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const generated = await server().request('GET', '/v1/healthz', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9A-Z]{26}$/);
  });
});

describeEach('a fault becomes a 500 problem whose error id is in the log', {}, ({ dialect }) => {
  it('answers 500 with an error id and logs that id with the request id', async () => {
    const lines: string[] = [];
    const server = await startTestServer(dialect, { logLines: lines });
    const { key } = await server.bootstrap();
    // Break the storage under the running server: the next query fails unexpectedly.
    await server.ctx.db.schema.alterTable('environments').renameTo('environments_moved').execute();
    const response = await server.request('GET', '/v1/environments', { key, headers: { 'x-request-id': 'fault-1' } });
    expectProblem(response, 500);
    const errorId = response.body.error_id;
    expect(errorId).toMatch(/^[0-9A-Z]{26}$/);
    expect(response.body.detail).toContain(errorId);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.error_id === errorId);
    expect(logged).toMatchObject({ level: 50, request_id: 'fault-1' });
    // Exactly this sentence: nothing of the underlying error (table names, SQL, a stack) leaks.
    expect(response.body.detail).toBe(`an unexpected error occurred; quote error id ${errorId} when reporting it`);
    await server.close();
  });
});

describe('structured logs', () => {
  it('write one access line per request, with the request id, route, status and duration, and never the key', async () => {
    const lines: string[] = [];
    const server = await startTestServer('sqlite', { logLines: lines });
    const { key } = await server.bootstrap();
    await server.request('GET', '/v1/workspaces/current', { key, headers: { 'x-request-id': 'req-abc' } });
    await server.request('GET', '/v1/experiments/01ARZ3NDEKTSV4RRFFQ69G5FAV', { key, headers: { 'x-request-id': 'req-404' } });
    const entries = lines.map((line) => JSON.parse(line));
    const ok = entries.filter((entry) => entry.request_id === 'req-abc');
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', route: '/v1/workspaces/current', url: '/v1/workspaces/current', status: 200 });
    expect(ok[0].duration_ms).toBeGreaterThan(0);
    const missing = entries.filter((entry) => entry.request_id === 'req-404');
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatchObject({ msg: 'request', route: '/v1/experiments/:id', status: 404 });
    expect(lines.join('\n')).not.toContain(key);
    await server.close();
  });
});
