import { expect, it } from 'vitest';
import { auditOf, createSource, describeWebhooks, HOUR_MS, postInbound, type WebhookEnv } from './support.js';

// Every test gets a workspace of its own, so none reads the sources or audit entries another made.
describeWebhooks('webhook sources', { workspace: 'test' }, (env: () => WebhookEnv) => {
  const api = (method: string, path: string, body?: unknown) => env().server.request(method, path, { key: env().key, body });

  it('creates a source and shows its secret only at creation', async () => {
    const created = await api('POST', '/v1/webhook-sources', { slug: 'billing', name: 'Billing' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      workspace_id: env().workspaceId,
      slug: 'billing',
      name: 'Billing',
      enabled: true,
      previous_secret_expires_at: null,
      inbound_secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{43}$/),
    });
    const read = await api('GET', `/v1/webhook-sources/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('inbound_secret');
    const listed = await api('GET', '/v1/webhook-sources');
    expect(listed.body.data.map((source: any) => source.slug)).toContain('billing');
    expect(listed.body.data.every((source: any) => !('inbound_secret' in source))).toBe(true);
    expect(listed.body.next_cursor).toBeNull();
  });

  it('stores the secret sealed, never in clear', async () => {
    const created = await createSource(env().server, env().key, 'sealed');
    const row = await env().server.ctx.db.selectFrom('webhook_sources').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secret_enc).not.toContain(created.inbound_secret.slice(6));
    expect(env().server.ctx.secrets.open(row.secret_enc)).toBe(created.inbound_secret);
  });

  it('answers 409 for a taken slug and 422 for an invalid one', async () => {
    await createSource(env().server, env().key, 'billing');
    expect((await api('POST', '/v1/webhook-sources', { slug: 'billing', name: 'Again' })).status).toBe(409);
    for (const slug of ['Billing', 'has space', '', 'x'.repeat(65), 'under_score']) {
      const response = await api('POST', '/v1/webhook-sources', { slug, name: 'Bad' });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].pointer).toBe('/slug');
    }
    expect((await api('POST', '/v1/webhook-sources', { slug: 'a'.repeat(64), name: 'Long' })).status).toBe(201);
  });

  it('edits slug, name and enabled; a taken slug is 409; an unchanged body logs nothing', async () => {
    await createSource(env().server, env().key, 'billing');
    const source = await createSource(env().server, env().key, 'edit-me');
    const patched = await api('PATCH', `/v1/webhook-sources/${source.id}`, { slug: 'edited', name: 'Edited', enabled: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ slug: 'edited', name: 'Edited', enabled: false, inbound_path: `/webhooks/inbound/${env().workspaceId}/edited` });
    expect((await api('PATCH', `/v1/webhook-sources/${source.id}`, { slug: 'billing' })).status).toBe(409);
    expect((await api('PATCH', `/v1/webhook-sources/${source.id}`, { slug: 'edited' })).status).toBe(200);
    const updates = await auditOf(env().server, env().key, `action=webhook_source.updated&target_id=${source.id}`);
    expect(updates).toHaveLength(1);
    expect(updates[0]!.payload.changes).toEqual({
      slug: { from: 'edit-me', to: 'edited' },
      name: { from: 'Source edit-me', to: 'Edited' },
      enabled: { from: true, to: false },
    });
    expect(updates[0]!.actor_id).toBe(env().keyId);
  });

  it('answers 404 for unknown sources and another workspace’s, and 403 for client keys', async () => {
    const other = await env().server.bootstrap('Neighbour');
    const theirs = await createSource(env().server, other.key, 'theirs');
    for (const [method, path, body] of [
      ['GET', `/v1/webhook-sources/${theirs.id}`, undefined],
      ['PATCH', `/v1/webhook-sources/${theirs.id}`, { name: 'Mine now' }],
      ['POST', `/v1/webhook-sources/${theirs.id}/rotate-secret`, undefined],
      ['GET', `/v1/webhook-sources/${theirs.id}/deliveries`, undefined],
      ['GET', '/v1/webhook-sources/nope', undefined],
    ] as const) {
      expect((await api(method, path, body)).status).toBe(404);
    }
    expect((await api('GET', '/v1/webhook-sources')).body.data.map((source: any) => source.id)).not.toContain(theirs.id);
    const clientKey = (await api('POST', '/v1/api-keys', { name: 'sdk', kind: 'client' })).body.key;
    expect((await env().server.request('GET', '/v1/webhook-sources', { key: clientKey })).status).toBe(403);
    expect((await env().server.request('GET', '/v1/webhook-sources')).status).toBe(401);
  });

  it('verifies both secrets for 24 hours after a rotation, then only the new one', async () => {
    const source = await createSource(env().server, env().key, 'rotating');
    const send = (secret: string) => postInbound(env().server, env().clock, source.inbound_path, { secret, body: { event_key: 'rotation', unit_id: 'u' } });
    const rotated = await api('POST', `/v1/webhook-sources/${source.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.inbound_secret).toMatch(/^whsec_/);
    expect(rotated.body.inbound_secret).not.toBe(source.inbound_secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at)).toBe(env().clock.now() + 24 * HOUR_MS);
    expect((await send(source.inbound_secret)).status).toBe(202);
    expect((await send(rotated.body.inbound_secret)).status).toBe(202);

    env().clock.advance(24 * HOUR_MS - 1000);
    expect((await send(source.inbound_secret)).status).toBe(202);
    env().clock.advance(1000);
    const expired = await send(source.inbound_secret);
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toMatch(/no v1 signature matches/);
    expect((await send(rotated.body.inbound_secret)).status).toBe(202);
    expect((await api('GET', `/v1/webhook-sources/${source.id}`)).body.previous_secret_expires_at).toBeNull();
  });

  it('retires the oldest secret at once when rotating twice within the window', async () => {
    const source = await createSource(env().server, env().key, 'twice');
    const send = (secret: string) => postInbound(env().server, env().clock, source.inbound_path, { secret, body: { event_key: 'k', unit_id: 'u' } });
    const first = await api('POST', `/v1/webhook-sources/${source.id}/rotate-secret`);
    const second = await api('POST', `/v1/webhook-sources/${source.id}/rotate-secret`);
    expect((await send(source.inbound_secret)).status).toBe(401);
    expect((await send(first.body.inbound_secret)).status).toBe(202);
    expect((await send(second.body.inbound_secret)).status).toBe(202);
  });

  it('audits creation, edits and rotations without ever logging a secret', async () => {
    const source = await createSource(env().server, env().key, 'audited');
    expect((await api('PATCH', `/v1/webhook-sources/${source.id}`, { name: 'Audited' })).status).toBe(200);
    expect((await api('POST', `/v1/webhook-sources/${source.id}/rotate-secret`)).status).toBe(200);
    const entries = await auditOf(env().server, env().key, 'target_type=webhook_source&limit=200');
    const actions = new Set(entries.map((entry) => entry.action));
    expect(actions).toEqual(new Set(['webhook_source.created', 'webhook_source.updated', 'webhook_source.secret_rotated']));
    expect(JSON.stringify(entries)).not.toMatch(/whsec_/);
    const rotation = entries.find((entry) => entry.action === 'webhook_source.secret_rotated');
    expect(rotation?.payload).toEqual({ slug: expect.any(String), previous_secret_expires_at: expect.any(String) });
  });
});
