import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { ApiResponse } from '../support/server.js';

describeEachDialect('environments', (server) => {
  let key: string;
  let keyId: string;
  let listedAfterBootstrap: ApiResponse;
  beforeAll(async () => {
    ({ key, keyId } = await server().bootstrap());
    listedAfterBootstrap = await server().request('GET', '/v1/environments', { key });
  });

  it('bootstraps with a production environment', async () => {
    const listed = listedAfterBootstrap;
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [expect.objectContaining({ slug: 'production', name: 'Production' })], next_cursor: null });
  });

  it('creates an environment and audits it with the actor key', async () => {
    const created = await server().request('POST', '/v1/environments', { key, body: { name: 'Staging', slug: 'staging' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      workspace_id: expect.any(String),
      name: 'Staging',
      slug: 'staging',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const audit = await server().request('GET', `/v1/audit?target_type=environment&target_id=${created.body.id}`, { key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({ action: 'environment.created', actor_id: keyId, payload: { name: 'Staging', slug: 'staging' } }),
    ]);
  });

  it('answers 409 for a duplicate slug and writes no audit entry', async () => {
    const first = await server().request('POST', '/v1/environments', { key, body: { name: 'QA', slug: 'qa' } });
    expect(first.status).toBe(201);
    const before = await server().request('GET', '/v1/audit?action=environment.created&limit=200', { key });
    const duplicate = await server().request('POST', '/v1/environments', { key, body: { name: 'Again', slug: 'qa' } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toBe('https://verdict.dev/problems/key-taken');
    expect(duplicate.body.detail).toMatch(/qa/);
    const after = await server().request('GET', '/v1/audit?action=environment.created&limit=200', { key });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });

  it('reserves the slug "all" for unbound keys', async () => {
    const response = await server().request('POST', '/v1/environments', { key, body: { name: 'All', slug: 'all' } });
    expect(response.status).toBe(422);
    expect(response.body.errors[0].pointer).toBe('/slug');
  });

  it('pages with limit and an opaque cursor', async () => {
    // A workspace of its own, so the listing holds exactly what this test made.
    const { key } = await server().bootstrap('Paging');
    await server().request('POST', '/v1/environments', { key, body: { name: 'Staging', slug: 'staging' } });
    for (let i = 0; i < 5; i++) {
      await server().request('POST', '/v1/environments', { key, body: { name: `Env ${i}`, slug: `env-${i}` } });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await server().request('GET', `/v1/environments?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(page.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.data.map((e: { slug: string }) => e.slug));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['production', 'staging', 'env-0', 'env-1', 'env-2', 'env-3', 'env-4']);
    const bad = await server().request('GET', '/v1/environments?cursor=garbage', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].parameter).toBe('cursor');
  });
});

describeEachDialect('audit log', (server) => {
  it('lists every mutation newest first, filters, pages, and never holds secrets', async () => {
    const { key, webhookSecret } = await server().bootstrap();
    const start = new Date().toISOString();
    const created = await server().request('POST', '/v1/api-keys', { key, body: { name: 'a', kind: 'client' } });
    await server().request('POST', '/v1/environments', { key, body: { name: 'QA', slug: 'qa' } });
    await server().request('DELETE', `/v1/api-keys/${created.body.id}`, { key });

    const all = await server().request('GET', '/v1/audit', { key });
    expect(all.body.data.map((e: { action: string }) => e.action)).toEqual([
      'api_key.revoked',
      'environment.created',
      'api_key.created',
      'api_key.created',
      'environment.created',
      'workspace.created',
    ]);
    const text = JSON.stringify(all.body);
    expect(text).not.toContain(key);
    expect(text).not.toContain(created.body.key);
    expect(text).not.toContain(webhookSecret);

    const sinceStart = await server().request('GET', `/v1/audit?since=${encodeURIComponent(start)}`, { key });
    expect(sinceStart.body.data).toHaveLength(3);
    const untilStart = await server().request('GET', `/v1/audit?until=${encodeURIComponent(start)}`, { key });
    expect(untilStart.body.data).toHaveLength(3);
    const byAction = await server().request('GET', '/v1/audit?action=api_key.created', { key });
    expect(byAction.body.data).toHaveLength(2);

    const first = await server().request('GET', '/v1/audit?limit=4', { key });
    expect(first.body.data).toHaveLength(4);
    const second = await server().request('GET', `/v1/audit?limit=4&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.data.map((e: { action: string }) => e.action)).toEqual(['environment.created', 'workspace.created']);
    expect(second.body.next_cursor).toBeNull();

    const badDate = await server().request('GET', '/v1/audit?since=yesterday', { key });
    expect(badDate.status).toBe(400);
    expect(badDate.body.errors[0].parameter).toBe('since');
  });
});
