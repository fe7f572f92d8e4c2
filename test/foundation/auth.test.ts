import http from 'node:http';
import { beforeAll, expect, it } from 'vitest';
import { hashKey } from '../../src/features/api-keys/key-format.js';
import { describeEach } from '../support/describe-each.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { startTestServer } from '../support/server.js';

describeEachDialect('authentication', (server) => {
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    ({ key, keyId } = await server().bootstrap());
  });

  it('issues keys as vd_{srv|clt}_{env}_{secret} with at least 32 random bytes', async () => {
    expect(key).toMatch(/^vd_srv_all_[0-9A-Za-z]{43,}$/);
    const environment = await server().request('POST', '/v1/environments', { key, body: { name: 'Staging', slug: 'staging' } });
    const client = await server().request('POST', '/v1/api-keys', {
      key,
      body: { name: 'web', kind: 'client', environment_id: environment.body.id },
    });
    expect(client.status).toBe(201);
    expect(client.body.key).toMatch(/^vd_clt_staging_[0-9A-Za-z]{43,}$/);
    expect(client.body).toMatchObject({ prefix: 'vd_clt_staging', kind: 'client', environment_id: environment.body.id });
    expect(client.body.last_four).toBe(client.body.key.slice(-4));
  });

  it('stores only the SHA-256 of a key', async () => {
    const row = await server().ctx.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashKey(key));
    const everything = JSON.stringify(await server().ctx.db.selectFrom('api_keys').selectAll().execute());
    expect(everything).not.toContain(key.split('_')[3]);
  });

  it.each([
    ['missing', undefined, /required/],
    ['not bearer', 'Basic abc', /Bearer/],
    ['malformed', 'Bearer nope', /malformed/],
    ['unknown', `Bearer vd_srv_all_${'A'.repeat(43)}`, /unknown or has been revoked/],
  ])('answers 401 for a %s key', async (_label, header, detail) => {
    const response = await server().request('GET', '/v1/workspaces/current', {
      headers: header ? { authorization: header } : {},
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body.detail).toMatch(detail);
  });

  it('answers 403 when a client key calls a server-only operation', async () => {
    const client = await server().request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } });
    for (const [method, path] of [
      ['GET', '/v1/workspaces/current'],
      ['GET', '/v1/environments'],
      ['GET', '/v1/api-keys'],
      ['GET', '/v1/audit'],
    ] as const) {
      const response = await server().request(method, path, { key: client.body.key });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.detail).toMatch(/server key/);
    }
  });

  it('keeps last_used_at without writing on every request', async () => {
    const created = await server().request('POST', '/v1/api-keys', { key, body: { name: 'fresh', kind: 'server' } });
    await server().request('GET', '/v1/workspaces/current', { key: created.body.key });
    const row = await server().ctx.db.selectFrom('api_keys').select('last_used_at').where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(row.last_used_at).toBeNull();
    const listed = await server().request('GET', '/v1/api-keys', { key });
    const seen = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(Date.parse(seen.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
    await server().ctx.authenticator.flushUsage();
    const flushed = await server().ctx.db.selectFrom('api_keys').select('last_used_at').where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(flushed.last_used_at).toBe(Date.parse(seen.last_used_at));
  });

  it('revokes a key at once on this process, idempotently and audited', async () => {
    const created = await server().request('POST', '/v1/api-keys', { key, body: { name: 'temp', kind: 'server' } });
    expect((await server().request('GET', '/v1/workspaces/current', { key: created.body.key })).status).toBe(200);
    expect((await server().request('DELETE', `/v1/api-keys/${created.body.id}`, { key })).status).toBe(204);
    const after = await server().request('GET', '/v1/workspaces/current', { key: created.body.key });
    expect(after.status).toBe(401);
    expect((await server().request('DELETE', `/v1/api-keys/${created.body.id}`, { key })).status).toBe(204);
    const audit = await server().request('GET', `/v1/audit?action=api_key.revoked&target_id=${created.body.id}`, { key });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ actor_id: keyId, target_type: 'api_key' });
    const listed = await server().request('GET', '/v1/api-keys', { key });
    expect(listed.body.data.map((k: { id: string }) => k.id)).not.toContain(created.body.id);
    const all = await server().request('GET', '/v1/api-keys?include_revoked=true', { key });
    expect(all.body.data.find((k: { id: string }) => k.id === created.body.id).revoked_at).toEqual(expect.any(String));
  });

  it('tells keys apart on one keep-alive connection, and refuses a key revoked while its connection stays open', async () => {
    const other = await server().bootstrap('Other');
    const temp = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'conn', kind: 'server' } })).body;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (authorization: string) =>
      new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
        const request = http.get(`${server().url}/v1/workspaces/current`, { agent, headers: { authorization } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body, reused: request.reusedSocket }));
        });
        request.on('error', reject);
      });
    try {
      const first = await ask(`Bearer ${temp.key}`);
      expect(first.status).toBe(200);
      const again = await ask(`Bearer ${temp.key}`);
      expect(again).toMatchObject({ status: 200, reused: true, body: first.body });
      const tampered = await ask(`Bearer ${temp.key.slice(0, -1)}${temp.key.endsWith('A') ? 'B' : 'A'}`);
      expect(tampered).toMatchObject({ status: 401, reused: true });
      expect((await ask('Bearer not-a-key')).status).toBe(401);
      const otherWorkspace = await ask(`Bearer ${other.key}`);
      expect(otherWorkspace).toMatchObject({ status: 200, reused: true });
      expect(JSON.parse(otherWorkspace.body).id).toBe(other.workspaceId);
      expect(JSON.parse(first.body).id).not.toBe(other.workspaceId);
      expect((await ask(`Bearer ${temp.key}`)).status).toBe(200);
      expect((await server().request('DELETE', `/v1/api-keys/${temp.id}`, { key })).status).toBe(204);
      expect(await ask(`Bearer ${temp.key}`)).toMatchObject({ status: 401, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('rejects binding a key to an environment that is not in the workspace', async () => {
    const response = await server().request('POST', '/v1/api-keys', {
      key,
      body: { name: 'x', kind: 'client', environment_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' },
    });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([{ pointer: '/environment_id', message: expect.stringMatching(/no environment/) }]);
  });

  it('answers 404 when revoking a key that does not exist', async () => {
    const response = await server().request('DELETE', '/v1/api-keys/01HZZZZZZZZZZZZZZZZZZZZZZZ', { key });
    expect(response.status).toBe(404);
  });
});

describeEach('revocation reaches a second process within the cache lifetime', {}, ({ dialect }) => {
  it('refuses a key revoked in the first process once the cache of the second expires', async () => {
    const first = await startTestServer(dialect, { config: { keyCacheTtlMs: 300 } });
    const second = await startTestServer(dialect, { config: { keyCacheTtlMs: 300 }, database: first.database });
    const { key } = await first.bootstrap();
    const created = await first.request('POST', '/v1/api-keys', { key, body: { name: 'shared', kind: 'server' } });
    expect((await second.request('GET', '/v1/workspaces/current', { key: created.body.key })).status).toBe(200);
    await first.request('DELETE', `/v1/api-keys/${created.body.id}`, { key });
    expect((await first.request('GET', '/v1/workspaces/current', { key: created.body.key })).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await second.request('GET', '/v1/workspaces/current', { key: created.body.key })).status).toBe(401);
    await second.close();
    await first.close();
  });
});
