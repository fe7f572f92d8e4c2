import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/processes.js';
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

  it('censors a key or secret by its look in every other place and encoding of the URL (issue #51)', async () => {
    const key = boot.key;
    const secret = boot.webhookSecret;
    const underscoresAs = (credential: string, escape: string) => credential.replaceAll('_', escape);
    const nested = `%${'25'.repeat(12)}5F`;
    const paths = [
      `/v1/metrics?${key}`,
      `/v1/metrics?${key}=1`,
      `/v1/metrics?limit=5&${key}`,
      `/v1/metrics?${secret}`,
      `/v1/metrics?x=${underscoresAs(key, '%255F')}`,
      `/v1/metrics?x=${underscoresAs(key, '%25255F')}`,
      `/v1/metrics?x=${underscoresAs(key, nested)}`,
      `/v1/metrics?x=%zz${key}`,
      `/v1/metrics?x=${underscoresAs(key, '%5F')}%zz%E0%A4`,
      `/v1/metrics?x=${underscoresAs(secret, '%5f')}%`,
      `/v1/metrics?limit=5;x=${key}`,
      `/v1/metrics?${underscoresAs(key, '%5F')}=${underscoresAs(secret, '%255F')}`,
      `/v1/metrics/${underscoresAs(key, '%255F')}`,
      `/v1/metrics/prefix-${underscoresAs(secret, '%5F')}/more`,
    ];
    // A path that is not valid percent-encoding is refused before routing; whatever it logs is scanned too.
    const refusedPaths = [`/v1/metrics/prefix-${underscoresAs(secret, '%5F')}%zz/more`];
    const before = lines.length;
    for (const path of paths) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
    }
    await eventually(async () => lines.length - before >= paths.length, 10_000, 'an access line per request');
    for (const path of refusedPaths) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(400);
      await response.arrayBuffer();
    }
    const logged = lines.slice(before).join('\n');
    // The random part of each credential is what must never be written, in any form.
    for (const credential of [key.slice(-43), secret.slice(-30)]) expect(logged).not.toContain(credential);
    const urls = lines.slice(before).flatMap((line) => (JSON.parse(line) as { url?: string }).url ?? []);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/v1/metrics?[redacted]',
        '/v1/metrics?limit=5&[redacted]',
        '/v1/metrics?x=[redacted]',
        '/v1/metrics?limit=5;x=[redacted]',
        '/v1/metrics/[redacted]',
        '/v1/metrics/[redacted]/more',
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
