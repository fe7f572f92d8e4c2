import { expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';

describeEachDialect('tenant isolation', (server) => {
  it('never shows or changes another workspace’s environments, keys or audit', async () => {
    const acme = await server().bootstrap('Acme');
    const globex = await server().bootstrap('Globex');
    await server().request('POST', '/v1/environments', { key: acme.key, body: { name: 'Staging', slug: 'staging' } });
    const acmeKey = await server().request('POST', '/v1/api-keys', { key: acme.key, body: { name: 'ci', kind: 'server' } });

    const environments = await server().request('GET', '/v1/environments', { key: globex.key });
    expect(environments.body.data.map((e: { workspace_id: string }) => e.workspace_id)).toEqual([globex.workspaceId]);
    const keys = await server().request('GET', '/v1/api-keys?include_revoked=true', { key: globex.key });
    expect(keys.body.data.every((k: { workspace_id: string }) => k.workspace_id === globex.workspaceId)).toBe(true);
    const audit = await server().request('GET', '/v1/audit?limit=200', { key: globex.key });
    expect(audit.body.data.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit.body)).not.toContain(acme.workspaceId);
    expect(JSON.stringify(audit.body)).not.toContain(acmeKey.body.id);

    const revoke = await server().request('DELETE', `/v1/api-keys/${acmeKey.body.id}`, { key: globex.key });
    expect(revoke.status).toBe(404);
    expect((await server().request('GET', '/v1/workspaces/current', { key: acmeKey.body.key })).status).toBe(200);

    const bind = await server().request('POST', '/v1/api-keys', {
      key: globex.key,
      body: { name: 'sneaky', kind: 'client', environment_id: acme.environmentId },
    });
    expect(bind.status).toBe(422);

    const current = await server().request('GET', '/v1/workspaces/current', { key: globex.key });
    expect(current.body).toMatchObject({ id: globex.workspaceId, name: 'Globex', slug: 'globex' });
  });
});
