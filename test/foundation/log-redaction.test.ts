import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';

/** Issue #31: a key or secret in a URL never reaches the log, whatever its parameter is called. */
describe('credentials in URLs are redacted from the log', () => {
  const lines: string[] = [];
  let server: TestServer;
  let boot: Bootstrap;

  beforeAll(async () => {
    server = await startTestServer('sqlite', { logLines: lines });
    boot = await server.bootstrap('Logs');
  });
  afterAll(() => server.close());

  it('censors a Verdict key or webhook secret under any parameter name or in the path, and the named parameters', async () => {
    const key = boot.key;
    const secret = boot.webhookSecret;
    const clientPart = key.replace('vd_srv_', 'vd_clt_');
    const paths = [
      `/v1/experiments?access_token=${key}`,
      `/v1/experiments?apikey=${key}`,
      `/v1/experiments?auth=${encodeURIComponent(key)}`,
      `/v1/experiments?key%5B%5D=${key}`,
      `/v1/experiments?key[]=${key}`,
      `/v1/experiments?anything=${clientPart}&limit=5`,
      `/v1/experiments?x=${secret}`,
      `/v1/experiments?x=${encodeURIComponent(secret).replace('_', '%5F')}`,
      `/v1/assignments/${key}`,
      `/v1/experiments?password=hunter2&Api-Key=plain&client_secret=s3`,
    ];
    for (const path of paths) await server.request('GET', path, { key });
    const urls = lines.map((line) => JSON.parse(line) as { url?: string }).flatMap((entry) => (entry.url ? [entry.url] : []));
    const logged = lines.join('\n');
    for (const credential of [key, secret, clientPart, key.slice(-43), secret.slice(-30), 'hunter2', 'plain', '=s3']) expect(logged).not.toContain(credential);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/v1/experiments?access_token=[redacted]',
        '/v1/experiments?apikey=[redacted]',
        '/v1/experiments?key%5B%5D=[redacted]',
        '/v1/experiments?anything=[redacted]&limit=5',
        '/v1/assignments/[redacted]',
        '/v1/experiments?password=[redacted]&Api-Key=[redacted]&client_secret=[redacted]',
      ]),
    );
  });

  it('leaves other values alone, ids and cursors included', async () => {
    const path = '/v1/experiments?limit=5&cursor=vdx_01ARZ3NDEKTSV4RRFFQ69G5FAV&monkey=1';
    await server.request('GET', path, { key: boot.key });
    const urls = lines.map((line) => JSON.parse(line) as { url?: string }).map((entry) => entry.url);
    expect(urls).toContain(path);
  });
});
