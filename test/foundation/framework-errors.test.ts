import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A GET sent with the path exactly as given (fetch would normalise `..` and re-encode `%`). */
function rawGet(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: Number(port), path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(text) : text,
        });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

/** Bytes that are not an HTTP request Node can parse; answers the raw response text. */
function rawBytes(server: TestServer, bytes: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

function expectProblem(response: RawResponse, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: type === 'about:blank' ? type : `https://verdict.dev/problems/${type}`, title: expect.any(String) });
}

function parseLines(lines: string[]) {
  return lines.map((line) => JSON.parse(line) as { level: number; msg: string; url?: string });
}

describe('errors raised by Fastify and Node themselves are problems, never 500s', () => {
  const lines: string[] = [];
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { logLines: lines });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 400 for a path that is not valid percent-encoding, with the request id', async () => {
    for (const path of ['/v1/assignments/%E0%A4%A', '/v1/nothing/%zz', '/docs/static/%E0%A4%A']) {
      const response = await rawGet(server, path, { 'x-request-id': 'bad-url-1' });
      expectProblem(response, 400, 'malformed-request');
      expect(response.body.detail).toContain('percent-encoded');
      expect(response.headers['x-request-id']).toBe('bad-url-1');
    }
  });

  it('answers 414 for a path parameter longer than the router reads', async () => {
    const response = await rawGet(server, `/v1/assignments/${'a'.repeat(1025)}`);
    expectProblem(response, 414, 'uri-too-long');
  });

  it('answers 431 for headers over the limit', async () => {
    const response = await rawGet(server, '/v1/healthz', { 'x-big': 'a'.repeat(20_000) });
    expectProblem(response, 431, 'request-header-fields-too-large');
    expect(response.body.detail).toBe(`the request line and headers exceed ${http.maxHeaderSize} bytes`);
  });

  it('answers 400 for bytes that are not HTTP', async () => {
    const text = await rawBytes(server, 'NOT HTTP AT ALL\r\n\r\n');
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(JSON.parse(body)).toMatchObject({ status: 400, type: 'https://verdict.dev/problems/malformed-request' });
  });

  it('answers a path that climbs out of /docs/static with a 403 problem', async () => {
    for (const path of ['/docs/static/..', '/docs/static/../../package.json', '/docs/static/%2e%2e/%2e%2e/package.json']) {
      const response = await rawGet(server, path);
      expectProblem(response, 403, 'forbidden');
      expect(response.body.detail).toContain('cannot be served');
    }
  });

  it('answers an unsatisfiable Range on a static file with a 416 problem and Content-Range', async () => {
    const response = await rawGet(server, '/docs/static/swagger-ui.css', { range: 'bytes=999999999-' });
    expectProblem(response, 416, 'about:blank');
    expect(response.body.title).toBe('Range Not Satisfiable');
    expect(response.headers['content-range']).toMatch(/^bytes \*\/\d+$/);
  });

  it('still serves the docs’ static files', async () => {
    const response = await rawGet(server, '/docs/static/swagger-ui.css');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/css/);
  });

  it('logged no error for any of it', () => {
    expect(
      parseLines(lines)
        .filter((entry) => entry.level >= 50)
        .map((entry) => entry.msg),
    ).toEqual([]);
  });
});

describe('the request log', () => {
  it('redacts the values of api_key, key, token and secret in the query string, and keeps the rest', async () => {
    const lines: string[] = [];
    const server = await startTestServer('sqlite', { logLines: lines });
    const { key } = await server.bootstrap();
    const secrets = ['vd_srv_all_LEAKED1', 'LEAKED2', 'LEAKED3', 'LEAKED4', 'LEAKED5', 'LEAKED6'];
    const query = `api_key=${secrets[0]}&limit=5&key=${secrets[1]}&token=${secrets[2]}&secret=${secrets[3]}&Token=${secrets[4]}&%6Bey=${secrets[5]}`;
    expect((await server.request('GET', `/v1/environments?${query}`, { key })).status).toBeLessThan(500);
    await server.request('GET', `/v1/nothing-here?${query}`);
    await server.close();
    for (const secret of secrets) expect(lines.join('\n')).not.toContain(secret);
    const urls = parseLines(lines).flatMap((entry) => (entry.url ? [entry.url] : []));
    expect(urls).toContain('/v1/environments?api_key=[redacted]&limit=5&key=[redacted]&token=[redacted]&secret=[redacted]&Token=[redacted]&%6Bey=[redacted]');
    expect(urls).toContain('/v1/nothing-here?api_key=[redacted]&limit=5&key=[redacted]&token=[redacted]&secret=[redacted]&Token=[redacted]&%6Bey=[redacted]');
  });
});
