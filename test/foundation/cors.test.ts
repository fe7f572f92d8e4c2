import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { runningExperiment } from '../experiments/helpers.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';

const PAGE = 'https://shop.example.com';

async function preflight(server: TestServer, path: string, origin: string) {
  return fetch(`${server.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
}

describe('CORS for browser SDKs (default: any origin, client routes only)', () => {
  let server: TestServer;
  let boot: Bootstrap;
  let clientKey: string;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    boot = await server.bootstrap();
    const created = await server.request('POST', '/v1/api-keys', { key: boot.key, body: { name: 'web', kind: 'client' } });
    clientKey = created.body.key;
    await runningExperiment(server, boot.key, boot.environmentId, { key: 'hero' });
  });
  afterAll(() => server.close());

  it('answers a preflight without a key, allowing the headers the SDK sends', async () => {
    const response = await preflight(server, '/v1/events/batch', PAGE);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets a page read assign and event answers made with a client key', async () => {
    const assign = await fetch(`${server.url}/v1/assign`, {
      method: 'POST',
      headers: { origin: PAGE, authorization: `Bearer ${clientKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ experiment_key: 'hero', unit_id: 'visitor-1' }),
    });
    expect(assign.status).toBe(200);
    expect(assign.headers.get('access-control-allow-origin')).toBe('*');
    expect(assign.headers.get('access-control-expose-headers')).toContain('retry-after');
    const event = await fetch(`${server.url}/v1/events`, {
      method: 'POST',
      headers: { origin: PAGE, authorization: `Bearer ${clientKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_key: 'signup', unit_id: 'visitor-1' }),
    });
    expect(event.status).toBe(202);
    expect(event.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('gives server-only routes no CORS headers, so a page cannot read them', async () => {
    const response = await fetch(`${server.url}/v1/experiments`, { headers: { origin: PAGE, authorization: `Bearer ${boot.key}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    // Public routes that are not the SDK's (health, the admin UI's sign-in) stay same-origin too.
    const health = await fetch(`${server.url}/v1/healthz`, { headers: { origin: PAGE } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS preflights answer only for the routes a client key may call (issue #31)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  it('answers a preflight to a server-only or unknown path with the ordinary 405/404 problem and no CORS header', async () => {
    for (const [path, status] of [
      ['/v1/experiments', 405],
      ['/v1/api-keys', 405],
      ['/v1/audit', 405],
      ['/v1/nowhere', 404],
      ['/ui/session', 405],
    ] as const) {
      const response = await preflight(server, path, PAGE);
      expect(response.status, path).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(response.headers.get('access-control-allow-headers'), path).toBeNull();
    }
  });

  it('answers a preflight for a method the client route does not take without CORS headers', async () => {
    const response = await fetch(`${server.url}/v1/assign`, {
      method: 'OPTIONS',
      headers: { origin: PAGE, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers a bare OPTIONS (no Origin or no Access-Control-Request-Method) with a problem, not text/plain', async () => {
    const bare = await fetch(`${server.url}/v1/experiments`, { method: 'OPTIONS' });
    expect(bare.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(bare.headers.get('access-control-allow-origin')).toBeNull();
    for (const headers of [{}, { origin: PAGE }, { 'access-control-request-method': 'POST' }] as Array<Record<string, string>>) {
      const response = await fetch(`${server.url}/v1/assign`, { method: 'OPTIONS', headers });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await response.json()) as { detail: string }).detail).toMatch(/CORS preflight: send Origin and Access-Control-Request-Method/);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('still answers every client route’s preflight, path parameters included', async () => {
    for (const path of [
      '/v1/assign',
      '/v1/assign/batch',
      '/v1/events',
      '/v1/events/batch',
      '/v1/exposures',
      '/ofrep/v1/evaluate/flags',
      '/ofrep/v1/evaluate/flags/hero',
    ]) {
      const response = await preflight(server, path, PAGE);
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), path).toBe('*');
    }
  });
});

describe('CORS restricted to listed origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { config: { corsOrigins: [PAGE] } });
  });
  afterAll(() => server.close());

  it('allows a listed origin and leaves any other without the header', async () => {
    const allowed = await preflight(server, '/v1/assign', PAGE);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(PAGE);
    const other = await preflight(server, '/v1/assign', 'https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('VERDICT_CORS_ORIGINS', () => {
  it('reads *, off and a list of origins, and refuses anything else', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
    expect(loadConfig({ VERDICT_CORS_ORIGINS: 'off' }).corsOrigins).toBe(false);
    expect(loadConfig({ VERDICT_CORS_ORIGINS: 'https://a.example, http://localhost:5173/' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    expect(() => loadConfig({ VERDICT_CORS_ORIGINS: 'a.example' })).toThrow(ConfigError);
    expect(() => loadConfig({ VERDICT_CORS_ORIGINS: 'https://a.example/path' })).toThrow(/not an origin: "https:\/\/a.example\/path"/);
  });

  it('off: no CORS headers, and a preflight is an ordinary unknown method', async () => {
    const server = await startTestServer('sqlite', { config: { corsOrigins: false } });
    const response = await preflight(server, '/v1/assign', PAGE);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
    await server.close();
  });
});
