import { beforeAll, expect, it } from 'vitest';
import { experimentBody, runningExperiment } from '../experiments/helpers.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { ApiResponse, TestServer } from '../support/server.js';
import { createSource, drainAll, senderSignature, storedEvents } from '../webhooks/support.js';

// Issue #31: ids, numbers, text and times the API reads, refused with a problem before anything
// is stored, on both databases.

const JSON_HEADERS = { 'content-type': 'application/json' };

function expectProblem(response: ApiResponse, status: number, type: string) {
  expect(response.status, response.text.slice(0, 400)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.type).toBe(`https://verdict.dev/problems/${type}`);
}

function pointers(response: ApiResponse): string[] {
  return (response.body.errors ?? []).map((error: { pointer?: string; parameter?: string }) => error.pointer ?? error.parameter);
}

async function auditCount(server: TestServer, key: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: ApiResponse = await server.request('GET', `/v1/audit?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key });
    count += page.body.data.length;
    cursor = page.body.next_cursor;
  } while (cursor);
  return count;
}

async function sendBytes(server: TestServer, method: string, path: string, key: string, bytes: Buffer): Promise<ApiResponse> {
  const response = await fetch(server.url + path, { method, headers: { ...JSON_HEADERS, authorization: `Bearer ${key}` }, body: bytes });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

describeEachDialect('input refusals (issue #31)', (server) => {
  let key: string;
  let clientKey: string;
  let workspaceId: string;
  let environmentId: string;
  let experiment: { id: string; key: string };
  let templateId: string;
  let metricId: string;

  beforeAll(async () => {
    ({ key, workspaceId, environmentId } = await server().bootstrap('Refusals'));
    clientKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } })).body.key;
    experiment = await runningExperiment(server(), key, environmentId, { key: 'refusals' });
    const template = await server().request('POST', '/v1/templates', { key, body: { name: 'Note', body: 'Hello {{name}}' } });
    templateId = template.body.id;
    await server().request('POST', `/v1/templates/${templateId}/versions`, { key });
    metricId = (await server().request('POST', '/v1/metrics', { key, body: { key: 'buys', name: 'Buys', event_key: 'buy', kind: 'binary' } })).body.id;
  });

  it('answers 422 naming the field to an empty or malformed id in any body, and stores nothing', async () => {
    const before = await auditCount(server(), key);
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/api-keys', { name: 'k', kind: 'server', environment_id: '' }, '/environment_id'],
      ['POST', '/v1/api-keys', { name: 'k', kind: 'server', environment_id: 'not-an-id' }, '/environment_id'],
      ['POST', '/v1/experiments', experimentBody(environmentId, { mutex_group_id: '' }), '/mutex_group_id'],
      ['POST', '/v1/experiments', experimentBody(''), '/environment_id'],
      ['POST', '/v1/experiments', experimentBody(environmentId, { guardrail_metric_ids: [metricId, ''] }), '/guardrail_metric_ids/1'],
      ['PATCH', `/v1/experiments/${experiment.id}`, { mutex_group_id: '' }, '/mutex_group_id'],
      ['PATCH', `/v1/experiments/${experiment.id}`, { primary_metric_id: metricId.toLowerCase() }, '/primary_metric_id'],
      ['POST', '/v1/metrics', { key: 'r', name: 'R', kind: 'ratio', numerator_metric_id: '', denominator_metric_id: metricId }, '/numerator_metric_id'],
      ['POST', '/v1/metrics', { key: 'r', name: 'R', kind: 'ratio', numerator_metric_id: metricId, denominator_metric_id: ' ' }, '/denominator_metric_id'],
      ['POST', '/v1/renders', { template_id: '', formats: ['html'], data: { name: 'x' } }, '/template_id'],
    ];
    for (const [method, path, body, pointer] of cases) {
      const response = await server().request(method, path, { key, body });
      expectProblem(response, 422, 'validation');
      expect(pointers(response), `${method} ${path}`).toContain(pointer);
      expect(response.body.errors.find((e: { pointer: string }) => e.pointer === pointer).message).toMatch(/must be an id: a ULID/);
    }
    expect(await auditCount(server(), key)).toBe(before);
  });

  it('refuses primary_metric_id "" (422) on create and edit, where it was stored before', async () => {
    const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { primary_metric_id: '' }) });
    expectProblem(created, 422, 'validation');
    expect(pointers(created)).toEqual(['/primary_metric_id']);
    const edited = await server().request('PATCH', `/v1/experiments/${experiment.id}`, { key, body: { primary_metric_id: '' } });
    expectProblem(edited, 422, 'validation');
    expect((await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body.primary_metric_id).toBeNull();
    const valid = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { primary_metric_id: metricId }) });
    expect(valid.status, valid.text).toBe(201);
  });

  it('keeps answering 404 to a malformed id in the path, as to an unknown one', async () => {
    for (const path of ['/v1/experiments/nope', '/v1/metrics/%20', '/v1/templates/x', '/v1/renders/x']) {
      expectProblem(await server().request('GET', path, { key }), 404, 'not-found');
    }
  });

  it('answers 422 to a number beyond ±1.8e308 anywhere in a body, naming its pointer, and stores nothing', async () => {
    const before = await auditCount(server(), key);
    const raw = (path: string, text: string, withKey = key) => server().request('POST', path, { key: withKey, rawBody: text, headers: JSON_HEADERS });
    const experimentJson = JSON.stringify(experimentBody(environmentId, { key: 'inf' })).replace(/}$/, ',"decision_rule":{"min_sample_per_variant":1e309}}');
    const cases: Array<[Promise<ApiResponse>, string]> = [
      [raw('/v1/experiments', experimentJson), '/decision_rule/min_sample_per_variant'],
      [raw('/v1/events', '{"event_key":"inf","unit_id":"inf-unit","properties":{"x":1e309}}', clientKey), '/properties/x'],
      [
        raw('/v1/events/batch', '{"events":[{"event_key":"inf","unit_id":"inf-unit","properties":{"amount":-1e400}}]}', clientKey),
        '/events/0/properties/amount',
      ],
      [raw('/v1/assign', `{"experiment_key":"${experiment.key}","unit_id":"inf-unit","context":{"n":[1, 2e308]}}`, clientKey), '/context/n/1'],
      [raw('/v1/renders', `{"template_id":"${templateId}","formats":["html"],"data":{"name":${'9'.repeat(400)}}}`), '/data/name'],
    ];
    for (const [sent, pointer] of cases) {
      const response = await sent;
      expectProblem(response, 422, 'validation');
      expect(pointers(response)).toEqual([pointer]);
      expect(response.body.errors[0].message).toMatch(/must be a finite number/);
    }
    expect(await auditCount(server(), key)).toBe(before);
    expect((await server().request('GET', '/v1/assignments/inf-unit', { key })).body.assignments).toEqual([]);
    await drainAll(server());
    expect((await storedEvents(server(), workspaceId)).filter((event) => event.unit_id === 'inf-unit')).toEqual([]);
    // Large finite numbers still pass.
    const large = await raw('/v1/events', '{"event_key":"big","unit_id":"big-unit","properties":{"amount":1.7e308}}', clientKey);
    expect(large.status, large.text).toBe(202);
  });

  it('answers 400 to a body that is not UTF-8 on every JSON route, signed webhooks included, and stores nothing', async () => {
    const before = await auditCount(server(), key);
    const invalid = (json: string) =>
      Buffer.concat([Buffer.from(json.slice(0, json.indexOf('@'))), Buffer.from([0xff, 0xfe]), Buffer.from(json.slice(json.indexOf('@') + 1))]);
    const sent = [
      await sendBytes(server(), 'POST', '/v1/metrics', key, invalid('{"key":"utf","name":"a@b","event_key":"e","kind":"binary"}')),
      await sendBytes(server(), 'POST', '/v1/environments', key, invalid('{"name":"Env @"}')),
      await sendBytes(server(), 'POST', '/v1/events', clientKey, invalid('{"event_key":"utf","unit_id":"utf-unit","properties":{"n":"@"}}')),
      // An encoded surrogate (ED A0 80) is not UTF-8 either.
      await sendBytes(
        server(),
        'POST',
        '/v1/events',
        clientKey,
        Buffer.concat([Buffer.from('{"event_key":"utf","unit_id":"utf-unit","properties":{"n":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
      ),
    ];
    for (const response of sent) {
      expectProblem(response, 400, 'malformed-request');
      expect(response.body.detail).toBe('the body is not valid JSON: it is not valid UTF-8');
    }
    const source = await createSource(server(), key, 'utf-source');
    const body = invalid('{"event_key":"utf","unit_id":"utf-unit","properties":{"n":"@"}}');
    const t = Math.floor(server().ctx.clock.now() / 1000);
    const signed = await fetch(server().url + source.inbound_path, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-service-signature': `t=${t},v1=${senderSignature(source.inbound_secret, t, body)}` },
      body,
    });
    expect(signed.status).toBe(400);
    expect(((await signed.json()) as { detail: string }).detail).toBe('the body is not valid JSON: it is not valid UTF-8');
    expect(await auditCount(server(), key)).toBe(before + 1); // the source itself
    await drainAll(server());
    expect((await storedEvents(server(), workspaceId)).filter((event) => event.unit_id === 'utf-unit')).toEqual([]);
  });

  it('answers 422 to a lone surrogate in a string or a key, and stores a valid pair exactly', async () => {
    const before = await auditCount(server(), key);
    const raw = (path: string, text: string, withKey = key) => server().request('POST', path, { key: withKey, rawBody: text, headers: JSON_HEADERS });
    const cases: Array<[Promise<ApiResponse>, string]> = [
      [raw('/v1/metrics', '{"key":"lone","name":"a\\ud800b","event_key":"e","kind":"binary"}'), '/name'],
      [raw('/v1/metrics', '{"key":"lone","name":"\\udfffb","event_key":"e","kind":"binary"}'), '/name'],
      [raw('/v1/events', '{"event_key":"lone","unit_id":"lone-unit","properties":{"\\udc00":1}}', clientKey), '/properties/\udc00'],
      [raw('/v1/assign', `{"experiment_key":"${experiment.key}","unit_id":"lone\\ud83d","context":{}}`, clientKey), '/unit_id'],
    ];
    for (const [sent, pointer] of cases) {
      const response = await sent;
      expectProblem(response, 422, 'validation');
      expect(pointers(response)).toEqual([pointer]);
      expect(response.body.errors[0].message).toMatch(/lone UTF-16 surrogate/);
    }
    expect(await auditCount(server(), key)).toBe(before);
    const paired = await raw('/v1/metrics', '{"key":"pair","name":"a\\ud83d\\ude00b","event_key":"e","kind":"binary"}');
    expect(paired.status, paired.text).toBe(201);
    expect((await server().request('GET', `/v1/metrics/${paired.body.id}`, { key })).body.name).toBe('a😀b');
  });

  it('refuses U+0000 alike on both databases: 422 in a body (string or key), 400 in a path or query', async () => {
    const before = await auditCount(server(), key);
    const raw = (path: string, text: string, withKey = key) => server().request('POST', path, { key: withKey, rawBody: text, headers: JSON_HEADERS });
    for (const [sent, pointer] of [
      [raw('/v1/metrics', '{"key":"nul","name":"a\\u0000b","event_key":"e","kind":"binary"}'), '/name'],
      [raw('/v1/events', '{"event_key":"nul","unit_id":"nul-unit","properties":{"k\\u0000":1}}', clientKey), '/properties/k\u0000'],
      [raw('/v1/events', '{"event_key":"nul","unit_id":"nul\\u0000unit"}', clientKey), '/unit_id'],
    ] as Array<[Promise<ApiResponse>, string]>) {
      const response = await sent;
      expectProblem(response, 422, 'validation');
      expect(pointers(response)).toEqual([pointer]);
      expect(response.body.errors[0].message).toMatch(/U\+0000/);
    }
    for (const path of ['/v1/api-keys/%00', `/v1/assignments/a%00b`, '/v1/audit?target_id=%00']) {
      const response = await server().request(path.startsWith('/v1/api-keys') ? 'DELETE' : 'GET', path, { key });
      expectProblem(response, 400, 'malformed-request');
      expect(response.body.detail).toMatch(/%00/);
    }
    expect(await auditCount(server(), key)).toBe(before);
    await drainAll(server());
    expect((await storedEvents(server(), workspaceId)).filter((event) => String(event.unit_id).startsWith('nul'))).toEqual([]);
  });

  it('answers 400 to an impossible time in a query and 422 in a body: leap second, Feb 30, hour 24', async () => {
    for (const time of ['2024-12-31T23:59:60Z', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2024-13-01T00:00:00Z']) {
      const encoded = encodeURIComponent(time);
      for (const path of [`/v1/audit?since=${encoded}`, `/v1/audit?until=${encoded}`, `/v1/experiments/${experiment.id}/results/history?since=${encoded}`]) {
        const response = await server().request('GET', path, { key });
        expectProblem(response, 400, 'invalid-parameters');
        expect(response.body.errors[0].message).toMatch(/RFC 3339 date-time that exists/);
      }
      const event = await server().request('POST', '/v1/events', { key: clientKey, body: { event_key: 'time', unit_id: 'time-unit', occurred_at: time } });
      expectProblem(event, 422, 'validation');
      expect(pointers(event)).toEqual(['/occurred_at']);
    }
    const fine = await server().request('GET', `/v1/audit?since=${encodeURIComponent('2024-02-29T23:59:59.999+01:00')}`, { key });
    expect(fine.status).toBe(200);
    expect(fine.body.data.length).toBeGreaterThan(0);
  });
});
