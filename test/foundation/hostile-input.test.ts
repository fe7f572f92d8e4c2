import { beforeAll, expect, it } from 'vitest';
import { experimentBody, runningExperiment } from '../experiments/helpers.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { ApiResponse, TestServer } from '../support/server.js';
import { createSource, drainAll, senderSignature, storedEvents, taskToolSignature } from '../webhooks/support.js';

function expectProblem(response: ApiResponse, status: number, type?: string) {
  expect(response.status, response.text.slice(0, 300)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
  if (type) expect(response.body.type).toBe(`https://verdict.dev/problems/${type}`);
}

/** `depth` arrays inside each other, as JSON text: a value of exactly that depth. */
function nestedText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const LOG_LINES: string[] = [];

interface Fixture {
  key: string;
  clientKey: string;
  workspaceId: string;
  webhookSecret: string;
  environmentId: string;
  experiment: { id: string; key: string };
  segmentId: string;
  templateId: string;
  source: { inbound_path: string; inbound_secret: string };
}

async function setUp(server: TestServer): Promise<Fixture> {
  const { key, workspaceId, webhookSecret, environmentId } = await server.bootstrap('Hostile');
  const client = await server.request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } });
  const experiment = await runningExperiment(server, key, environmentId, { key: 'hostile' });
  const segment = await server.request('POST', '/v1/segments', {
    key,
    body: { key: 'vips', name: 'VIPs', rule: { attribute: 'plan', op: 'eq', value: 'vip' } },
  });
  const template = await server.request('POST', '/v1/templates', { key, body: { name: 'Note', body: 'Hello {{name}}' } });
  await server.request('POST', `/v1/templates/${template.body.id}/versions`, { key });
  const source = await createSource(server, key, 'crm');
  expect([client.status, segment.status, template.status]).toEqual([201, 201, 201]);
  return {
    key,
    clientKey: client.body.key,
    workspaceId,
    webhookSecret,
    environmentId,
    experiment,
    segmentId: segment.body.id,
    templateId: template.body.id,
    source,
  };
}

interface DeepRoute {
  name: string;
  send(deep: string): Promise<ApiResponse>;
  /** Where the depth limit is crossed, as a JSON Pointer prefix. */
  pointer: string;
}

/** Every route that takes free-form JSON, each with the deep value where a client would put it. */
function deepRoutes(server: TestServer, f: Fixture): DeepRoute[] {
  const post = (path: string, key: string, raw: string, method = 'POST') => server.request(method, path, { key, rawBody: raw, headers: JSON_HEADERS });
  const experimentJson = (deep: string) =>
    JSON.stringify(experimentBody(f.environmentId, { key: 'deep-audience' })).replace(/}$/, `,"audience":{"x":${deep}}}`);
  const inbound = (deep: string) => {
    const raw = `{"events":[{"event_key":"deep","unit_id":"deep-unit","properties":{"x":${deep}}}]}`;
    const t = Math.floor(server.ctx.clock.now() / 1000);
    const headers = { ...JSON_HEADERS, 'x-service-signature': `t=${t},v1=${senderSignature(f.source.inbound_secret, t, raw)}` };
    return server.request('POST', f.source.inbound_path, { rawBody: raw, headers });
  };
  const taskTool = (deep: string) => {
    const raw = `{"event":"taskUpdated","task_id":"t-1","history_items":[{"id":"h-1","field":"status","after":{"x":${deep}}}]}`;
    return server.request('POST', `/webhooks/task-tool/${f.workspaceId}`, {
      rawBody: raw,
      headers: { ...JSON_HEADERS, 'x-signature': taskToolSignature(f.webhookSecret, raw) },
    });
  };
  const flag = f.experiment.key;
  return [
    {
      name: 'assign',
      pointer: '/context/x',
      send: (d) => post('/v1/assign', f.clientKey, `{"experiment_key":"${flag}","unit_id":"deep-unit","context":{"x":${d}}}`),
    },
    {
      name: 'assign batch',
      pointer: '/context/x',
      send: (d) => post('/v1/assign/batch', f.clientKey, `{"experiments":["${flag}"],"unit_id":"deep-unit","context":{"x":${d}}}`),
    },
    {
      name: 'OFREP flag',
      pointer: '/context/x',
      send: (d) => post(`/ofrep/v1/evaluate/flags/${flag}`, f.clientKey, `{"context":{"targetingKey":"deep-unit","x":${d}}}`),
    },
    {
      name: 'OFREP bulk',
      pointer: '/context/x',
      send: (d) => post('/ofrep/v1/evaluate/flags', f.clientKey, `{"context":{"targetingKey":"deep-unit","x":${d}}}`),
    },
    {
      name: 'event',
      pointer: '/properties/x',
      send: (d) => post('/v1/events', f.clientKey, `{"event_key":"deep","unit_id":"deep-unit","properties":{"x":${d}}}`),
    },
    {
      name: 'event batch',
      pointer: '/events/0/properties/x',
      send: (d) => post('/v1/events/batch', f.clientKey, `{"events":[{"event_key":"deep","unit_id":"deep-unit","properties":{"x":${d}}}]}`),
    },
    { name: 'render', pointer: '/data/x', send: (d) => post('/v1/renders', f.key, `{"template_id":"${f.templateId}","formats":["html"],"data":{"x":${d}}}`) },
    { name: 'create experiment', pointer: '/audience/x', send: (d) => post('/v1/experiments', f.key, experimentJson(d)) },
    { name: 'edit experiment', pointer: '/audience/x', send: (d) => post(`/v1/experiments/${f.experiment.id}`, f.key, `{"audience":{"x":${d}}}`, 'PATCH') },
    { name: 'create segment', pointer: '/rule/x', send: (d) => post('/v1/segments', f.key, `{"key":"deep","name":"Deep","rule":{"x":${d}}}`) },
    { name: 'edit segment', pointer: '/rule/x', send: (d) => post(`/v1/segments/${f.segmentId}`, f.key, `{"rule":{"x":${d}}}`, 'PATCH') },
    { name: 'inbound webhook', pointer: '/events/0/properties/x', send: inbound },
    { name: 'task-tool callback', pointer: '/history_items/0/after/x', send: taskTool },
  ];
}

async function auditCount(server: TestServer, key: string): Promise<number> {
  const response = await server.request('GET', '/v1/audit?limit=200', { key });
  return response.body.data.length;
}

describeEachDialect(
  'hostile input',
  (server) => {
    let f: Fixture;
    beforeAll(async () => {
      f = await setUp(server());
    });

    for (const depth of [5_000, 20_000]) {
      it(`answers 422 to JSON nested ${depth} deep on every route that takes free-form JSON, and stores nothing`, async () => {
        const before = await auditCount(server(), f.key);
        for (const route of deepRoutes(server(), f)) {
          const response = await route.send(nestedText(depth));
          expectProblem(response, 422, 'validation');
          expect(response.body.errors, route.name).toHaveLength(1);
          expect(response.body.errors[0].pointer.startsWith(`${route.pointer}/0/0`), route.name).toBe(true);
          expect(response.body.errors[0].message).toBe('nests objects and arrays deeper than 128 levels');
        }
        expect(await auditCount(server(), f.key)).toBe(before);
        expect((await server().request('GET', '/v1/assignments/deep-unit', { key: f.key })).body.assignments).toEqual([]);
        await drainAll(server());
        expect((await storedEvents(server(), f.workspaceId)).filter((event) => event.unit_id === 'deep-unit')).toEqual([]);
      });
    }

    it('accepts a body nested exactly 128 deep and refuses 129, naming where', async () => {
      // The body is depth 1 and the context depth 2, so the value under it may nest 126 more.
      const body = (extra: number) => `{"experiment_key":"${f.experiment.key}","unit_id":"deep-ok","context":{"x":${nestedText(extra)}}}`;
      const fits = await server().request('POST', '/v1/assign', { key: f.clientKey, rawBody: body(126), headers: JSON_HEADERS });
      expect(fits.status, fits.text.slice(0, 200)).toBe(200);
      const over = await server().request('POST', '/v1/assign', { key: f.clientKey, rawBody: body(127), headers: JSON_HEADERS });
      expectProblem(over, 422, 'validation');
      expect(over.body.errors[0].pointer).toBe(`/context/x${'/0'.repeat(126)}`);
    });

    it('answers 400 to an empty body declared as JSON where the route takes a body, and changes nothing', async () => {
      const before = await auditCount(server(), f.key);
      for (const raw of ['', '  \n']) {
        const response = await server().request('POST', '/v1/environments', { key: f.key, rawBody: raw, headers: JSON_HEADERS });
        expectProblem(response, 400, 'malformed-request');
        expect(response.body.detail).toMatch(/empty/);
        expectProblem(await server().request('POST', '/v1/assign', { key: f.clientKey, rawBody: raw, headers: JSON_HEADERS }), 400, 'malformed-request');
      }
      expect(await auditCount(server(), f.key)).toBe(before);
    });

    it('still takes an empty JSON body as no body where the route takes none', async () => {
      const created = await server().request('POST', '/v1/experiments', { key: f.key, body: experimentBody(f.environmentId, { key: 'empty-start' }) });
      const started = await server().request('POST', `/v1/experiments/${created.body.id}/start`, { key: f.key, rawBody: '', headers: JSON_HEADERS });
      expect(started.status).toBe(200);
      expect(started.body.status).toBe('running');
    });

    it('verifies an inbound webhook whose valid v1 sits next to a malformed one', async () => {
      const raw = JSON.stringify({ event_key: 'signed', unit_id: 'sig-unit' });
      const t = Math.floor(server().ctx.clock.now() / 1000);
      const good = senderSignature(f.source.inbound_secret, t, raw);
      for (const header of [`t=${t},v1=${good},v1=abc`, `t=${t},v1=not-hex,v1=${good}`]) {
        const response = await server().request('POST', f.source.inbound_path, { rawBody: raw, headers: { ...JSON_HEADERS, 'x-service-signature': header } });
        expect(response.status, response.text).toBe(202);
      }
      const onlyBad = await server().request('POST', f.source.inbound_path, {
        rawBody: raw,
        headers: { ...JSON_HEADERS, 'x-service-signature': `t=${t},v1=abc` },
      });
      expectProblem(onlyBad, 401, 'invalid-signature');
      expect(onlyBad.body.detail).toMatch(/malformed/);
    });

    it('manages by path every unit id the body accepts: 86 × "€" (258 bytes) and 256 emoji', async () => {
      for (const unitId of ['€'.repeat(86), '😀'.repeat(256)]) {
        const path = encodeURIComponent(unitId);
        const assigned = await server().request('POST', '/v1/assign', { key: f.clientKey, body: { experiment_key: f.experiment.key, unit_id: unitId } });
        expect(assigned.status, assigned.text.slice(0, 200)).toBe(200);
        const listed = await server().request('GET', `/v1/assignments/${path}`, { key: f.key });
        expect(listed.status, listed.text.slice(0, 200)).toBe(200);
        expect(listed.body.assignments.map((a: { assignment_id: string }) => a.assignment_id)).toEqual([assigned.body.assignment_id]);
        expect((await server().request('DELETE', `/v1/assignments/${f.experiment.key}/${path}`, { key: f.key })).status).toBe(204);
        expect((await server().request('GET', `/v1/assignments/${path}`, { key: f.key })).body.assignments).toEqual([]);
        const pinned = await server().request('PUT', `/v1/experiments/${f.experiment.id}/overrides/${path}`, { key: f.key, body: { variant: 'green' } });
        expect(pinned.status, pinned.text.slice(0, 200)).toBe(200);
        expect(pinned.body.unit_id).toBe(unitId);
        expect((await server().request('DELETE', `/v1/experiments/${f.experiment.id}/overrides/${path}`, { key: f.key })).status).toBe(204);
        const flag = await server().request('POST', `/ofrep/v1/evaluate/flags/${f.experiment.key}`, {
          key: f.clientKey,
          body: { context: { targetingKey: unitId } },
        });
        expect(flag.status, flag.text.slice(0, 200)).toBe(200);
      }
    });

    it('refuses a unit id of 257 characters alike in the body (422) and in the path (400)', async () => {
      const unitId = 'é'.repeat(257);
      expectProblem(
        await server().request('POST', '/v1/assign', { key: f.clientKey, body: { experiment_key: f.experiment.key, unit_id: unitId } }),
        422,
        'validation',
      );
      const listed = await server().request('GET', `/v1/assignments/${encodeURIComponent(unitId)}`, { key: f.key });
      expectProblem(listed, 400, 'invalid-parameters');
      expect(listed.body.errors).toEqual([{ parameter: 'unit_id', message: 'must NOT have more than 256 characters' }]);
      const pinned = await server().request('PUT', `/v1/experiments/${f.experiment.id}/overrides/${encodeURIComponent(unitId)}`, {
        key: f.key,
        body: { variant: 'green' },
      });
      expectProblem(pinned, 400, 'invalid-parameters');
    });

    it('logged no error for any of it', () => {
      const errors = LOG_LINES.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level >= 50);
      expect(errors.map((entry) => entry.msg)).toEqual([]);
    });
  },
  { logLines: LOG_LINES },
);
