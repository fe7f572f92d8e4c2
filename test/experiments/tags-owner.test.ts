// The experiment list at scale (issue #52): tags (trimmed, lower-cased, validated) and an owner (a
// person of the workspace or a name as text; the signed-in person by default), both filters of the
// list, both changeable in any status and kept by a duplicate. On SQLite and PostgreSQL.
import { beforeAll, expect, it } from 'vitest';
import { addPerson, signInAs } from '../people/people-support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

describeEachDialect('experiment tags and owner', (server) => {
  let key: string;
  let environmentId: string;
  let dana: { id: string; name: string };
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    dana = (await addPerson(server(), key, 'dana@example.com', 'editor', 'Dana Scully')).user;
  });

  async function create(overrides: Record<string, unknown>) {
    const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, overrides) });
    expect(created.status, created.text).toBe(201);
    return created.body;
  }

  async function keysOf(query: string): Promise<string[]> {
    const response = await server().request('GET', `/v1/experiments?limit=200&${query}`, { key });
    expect(response.status, response.text).toBe(200);
    return response.body.data.map((experiment: { key: string }) => experiment.key);
  }

  it('keeps tags trimmed and in lower case without repeats, and refuses a malformed one naming its place', async () => {
    const created = await create({ key: 'tagged', tags: ['Checkout', ' growth ', 'checkout', 'q3:pricing'] });
    expect(created.tags).toEqual(['checkout', 'growth', 'q3:pricing']);
    expect(created.owner).toBeNull();

    const before = await keysOf('');
    const comma = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { tags: ['fine', 'a,b'] }) });
    expect(comma.status).toBe(422);
    expect(comma.headers.get('content-type')).toContain('application/problem+json');
    expect(comma.body.errors).toEqual([expect.objectContaining({ pointer: '/tags/1' })]);
    const quote = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { tags: ['"x"'] }) });
    expect(quote.body.errors).toEqual([expect.objectContaining({ pointer: '/tags/0' })]);
    const long = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { tags: ['x'.repeat(33)] }) });
    expect(long.status).toBe(422);
    expect(long.body.errors[0].pointer).toBe('/tags/0');
    const many = await server().request('POST', '/v1/experiments', {
      key,
      body: experimentBody(environmentId, { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }),
    });
    expect(many.status).toBe(422);
    expect(many.body.errors[0].pointer).toBe('/tags');
    expect(await keysOf('')).toEqual(before);
  });

  it('filters by every tag given, repeated or comma-separated, in any case, with _ taken literally', async () => {
    await create({ key: 'growth-only', tags: ['growth'] });
    await create({ key: 'both', tags: ['growth', 'checkout'] });
    await create({ key: 'under_score', tags: ['a_b'] });
    await create({ key: 'axb', tags: ['axb'] });
    expect(await keysOf('tag=growth')).toEqual(['tagged', 'growth-only', 'both']);
    expect(await keysOf('tag=GROWTH&tag=checkout')).toEqual(['tagged', 'both']);
    expect(await keysOf(`tag=${encodeURIComponent('checkout,growth')}`)).toEqual(['tagged', 'both']);
    expect(await keysOf('tag=growth&q=both')).toEqual(['both']);
    expect(await keysOf('tag=a_b')).toEqual(['under_score']);
    expect(await keysOf('tag=grow')).toEqual([]);
  });

  it('lists the most recently changed first, and pages through that order without skipping one', async () => {
    const all = await keysOf('');
    const oldest = await server().request('GET', '/v1/experiments?limit=1', { key });
    await server().request('PATCH', `/v1/experiments/${oldest.body.data[0].id}`, { key, body: { tags: ['touched'] } });
    const recent = await keysOf('order=updated');
    expect(recent[0]).toBe(all[0]);
    expect([...recent].sort()).toEqual([...all].sort());
    const paged: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { status: number; body: { data: { key: string }[]; next_cursor: string | null } } = await server().request(
        'GET',
        `/v1/experiments?order=updated&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { key },
      );
      expect(page.status).toBe(200);
      paged.push(...page.body.data.map((e) => e.key));
      cursor = page.body.next_cursor;
    }
    expect(paged).toEqual(recent);
    const foreign = await server().request('GET', `/v1/experiments?order=updated&cursor=${oldest.body.next_cursor}`, { key });
    expect(foreign.status).toBe(400);
  });

  it('owns by a person of the workspace or by a name as text, filters by either, and refuses an unknown person', async () => {
    const byPerson = await create({ key: 'owned-by-dana', owner: dana.id });
    expect(byPerson.owner).toEqual({ user_id: dana.id, name: 'Dana Scully' });
    const byName = await create({ key: 'owned-by-text', owner: '  Fox Mulder ' });
    expect(byName.owner).toEqual({ user_id: null, name: 'Fox Mulder' });
    expect(await keysOf(`owner=${dana.id}`)).toEqual(['owned-by-dana']);
    expect(await keysOf(`owner=${encodeURIComponent('fox mulder')}`)).toEqual(['owned-by-text']);

    const stranger = await server().bootstrap();
    const other = await addPerson(server(), stranger.key, 'walter@example.com', 'editor', 'Walter Skinner');
    const refused = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { owner: other.user.id }) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ pointer: '/owner' })]);
  });

  it('makes the signed-in person the owner of what they create without naming one', async () => {
    const session = await signInAs(server(), 'dana@example.com');
    const created = await server().request('POST', '/v1/experiments', {
      headers: session.change,
      body: experimentBody(environmentId, { key: 'from-session' }),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.owner).toEqual({ user_id: dana.id, name: 'Dana Scully' });
    const unowned = await server().request('POST', '/v1/experiments', {
      headers: session.change,
      body: experimentBody(environmentId, { key: 'from-session-unowned', owner: null }),
    });
    expect(unowned.body.owner).toBeNull();
    expect((await create({ key: 'from-key' })).owner).toBeNull();
  });

  it('changes tags and owner in any status, audit-logged, and only them once stopped', async () => {
    const created = await create({ key: 'to-stop', tags: ['old'] });
    await server().request('POST', `/v1/experiments/${created.id}/start`, { key });
    await server().request('POST', `/v1/experiments/${created.id}/stop`, { key, body: { reason: 'inconclusive' } });
    const patched = await server().request('PATCH', `/v1/experiments/${created.id}`, { key, body: { tags: ['New', 'archive-me'], owner: dana.id } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ tags: ['new', 'archive-me'], owner: { user_id: dana.id, name: 'Dana Scully' }, status: 'stopped' });
    const audit = await server().request('GET', `/v1/audit?target_id=${created.id}&action=experiment.updated`, { key });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0].payload.changes).toEqual({
      tags: { from: ['old'], to: ['new', 'archive-me'] },
      owner: { from: null, to: { user_id: dana.id, name: 'Dana Scully' } },
    });
    // The same values again change nothing; the definition of a stopped experiment still cannot change.
    const same = await server().request('PATCH', `/v1/experiments/${created.id}`, { key, body: { tags: ['new', 'archive-me'], owner: dana.id } });
    expect(same.status).toBe(200);
    expect((await server().request('GET', `/v1/audit?target_id=${created.id}&action=experiment.updated`, { key })).body.data).toHaveLength(1);
    const blocked = await server().request('PATCH', `/v1/experiments/${created.id}`, { key, body: { tags: ['x'], name: 'Renamed' } });
    expect(blocked.status).toBe(409);
    const cleared = await server().request('PATCH', `/v1/experiments/${created.id}`, { key, body: { tags: [], owner: null } });
    expect(cleared.body).toMatchObject({ tags: [], owner: null });
  });

  it('keeps tags and owner in a duplicate', async () => {
    const source = await create({ key: 'dup-source', tags: ['growth'], owner: 'Fox Mulder' });
    const copy = await server().request('POST', `/v1/experiments/${source.id}/duplicate`, { key, body: { key: 'dup-copy' } });
    expect(copy.status, copy.text).toBe(201);
    expect(copy.body).toMatchObject({ tags: ['growth'], owner: { user_id: null, name: 'Fox Mulder' } });
    const owned = await create({ key: 'dup-person', owner: dana.id });
    const personCopy = await server().request('POST', `/v1/experiments/${owned.id}/duplicate`, { key, body: { key: 'dup-person-copy' } });
    expect(personCopy.body.owner).toEqual({ user_id: dana.id, name: 'Dana Scully' });
  });
});
