import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { loadSegmentRules } from '../../src/features/segments/read.js';
import { newId } from '../../src/lib/ids.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { Bootstrap, TestServer } from '../support/server.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const proPlan = { attribute: 'user.plan', op: 'eq', value: 'pro' };
const ref = (segment: string) => ({ segment });
const and = (...operands: unknown[]) => ({ operator: 'and', operands });

/** An experiment row written straight to the table: the experiments API is another slice. */
async function insertExperiment(server: TestServer, owner: Bootstrap, key: string, audience: unknown, status: 'draft' | 'running' | 'archived') {
  const now = Date.now();
  const id = newId();
  await server.ctx.db
    .insertInto('experiments')
    .values({
      id,
      workspace_id: owner.workspaceId,
      environment_id: owner.environmentId,
      key,
      name: key,
      hypothesis: 'segments stay referenced',
      unit_type: 'user',
      status,
      variants: JSON.stringify([
        { id: newId(), key: 'control', weight: 50, is_control: true },
        { id: newId(), key: 'treatment', weight: 50, is_control: false },
      ]),
      audience: JSON.stringify(audience),
      decision_rule: JSON.stringify({ method: 'bayesian.posterior_threshold', posterior_threshold: 0.995 }),
      primary_metric_id: null,
      guardrail_metric_ids: '[]',
      mutex_group_id: null,
      variance_reduction: null,
      weights_changed: 0,
      started_at: status === 'running' ? now : null,
      stopped_at: null,
      stop_reason: null,
      outcome_notes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

describeEachDialect('segments', (server) => {
  let acme: Bootstrap;
  const notified: string[] = [];
  let unsubscribe: () => void = () => undefined;
  afterAll(() => unsubscribe());
  const call = (method: string, path: string, body?: unknown, key = acme.key) => server().request(method, path, { key, body });
  const create = (body: unknown, key = acme.key) => call('POST', '/v1/segments', body, key);
  const idOf = async (key: string) => {
    const all = await call('GET', '/v1/segments?limit=200');
    return (all.body.data as { id: string; key: string }[]).find((s) => s.key === key)?.id ?? 'none';
  };
  const errorsOf = async (response: { status: number; body: any }) => {
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    return response.body.errors as { pointer: string; message: string }[];
  };

  /** The three segments of the first two tests, which most later tests refer to, patch or delete. */
  const createBaseline = async () => {
    expect((await create({ key: 'pro-users', name: 'Pro users', rule: proPlan })).status).toBe(201);
    expect((await create({ key: 'everyone', name: 'Everyone', description: 'matches all units', rule: null })).status).toBe(201);
    const nested = await create({ key: 'pro-everyone', name: 'Nested', rule: and(ref('pro-users'), { operator: 'not', operands: [ref('everyone')] }) });
    expect(nested.status).toBe(201);
  };
  /** level-1 → level-2 → … → level-5, five levels of references. */
  const createChain = async () => {
    expect((await create({ key: 'level-5', name: 'x', rule: proPlan })).status).toBe(201);
    for (const level of [4, 3, 2, 1]) {
      expect((await create({ key: `level-${level}`, name: 'x', rule: ref(`level-${level + 1}`) })).status).toBe(201);
    }
  };

  beforeAll(() => {
    unsubscribe = server().ctx.changes.subscribe((change) => {
      if (change.topic === 'segment') notified.push(change.workspaceId);
    });
  });
  // Every test gets a workspace of its own and makes the segments it needs there.
  beforeEach(async () => {
    acme = await server().bootstrap('Acme');
  });

  it('creates a segment, audits it and notifies listeners', async () => {
    notified.length = 0;
    const created = await create({ key: 'pro-users', name: 'Pro users', rule: proPlan });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      workspace_id: acme.workspaceId,
      key: 'pro-users',
      name: 'Pro users',
      description: null,
      rule: proPlan,
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    expect(notified).toEqual([acme.workspaceId]);
    const audit = await call('GET', `/v1/audit?target_type=segment&target_id=${created.body.id}`);
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        action: 'segment.created',
        actor_id: acme.keyId,
        payload: { key: 'pro-users', name: 'Pro users', description: null, rule: proPlan },
      }),
    ]);
    expect((await call('GET', `/v1/segments/${created.body.id}`)).body).toEqual(created.body);
  });

  it('accepts a null rule (everyone), a description and references to existing segments', async () => {
    expect((await create({ key: 'pro-users', name: 'Pro users', rule: proPlan })).status).toBe(201);
    const everyone = await create({ key: 'everyone', name: 'Everyone', description: 'matches all units', rule: null });
    expect(everyone.status).toBe(201);
    expect(everyone.body).toMatchObject({ rule: null, description: 'matches all units' });
    const nested = await create({ key: 'pro-everyone', name: 'Nested', rule: and(ref('pro-users'), { operator: 'not', operands: [ref('everyone')] }) });
    expect(nested.status).toBe(201);
    const rules = await loadSegmentRules(server().ctx.db, acme.workspaceId);
    expect(rules).toEqual(
      new Map<string, unknown>([
        ['pro-users', proPlan],
        ['everyone', null],
        ['pro-everyone', nested.body.rule],
      ]),
    );
  });

  it('answers 422 with pointers for schema violations and for invalid rules under /rule', async () => {
    expect(await errorsOf(await create({ key: 'Bad Key', name: 'x', rule: null }))).toEqual([{ pointer: '/key', message: expect.any(String) }]);
    expect(await errorsOf(await create({ key: 'ok', name: '', rule: null }))).toEqual([{ pointer: '/name', message: expect.any(String) }]);
    // The shared validator also echoes the null branch of the nullable union ("must be null").
    expect(await errorsOf(await create({ key: 'ok', name: 'x', rule: null, description: 'd'.repeat(2001) }))).toContainEqual({
      pointer: '/description',
      message: 'must NOT have more than 2000 characters',
    });
    expect(await errorsOf(await create({ key: 'ok', name: 'x' }))).toEqual([{ pointer: '/rule', message: 'is required' }]);
    expect(await errorsOf(await create({ key: 'ok', name: 'x', rule: null, extra: 1 }))).toEqual([{ pointer: '/extra', message: 'is not a known field' }]);
    const badRule = and(proPlan, { attribute: 'country', op: 'like', value: 'DE' }, { operator: 'not', operands: [] });
    const issues = await errorsOf(await create({ key: 'ok', name: 'x', rule: badRule }));
    expect(issues).toEqual([
      { pointer: '/rule/operands/1/op', message: expect.stringMatching(/unknown op 'like'/) },
      { pointer: '/rule/operands/2/operands', message: expect.stringMatching(/exactly one operand/) },
    ]);
    expect((await errorsOf(await create({ key: 'ok', name: 'x', rule: 'plan = pro' })))[0]?.pointer).toBe('/rule');
    expect((await errorsOf(await create({ key: 'ok', name: 'x', rule: ref('Not A Key') })))[0]?.pointer).toBe('/rule/segment');
  });

  it('answers 422 for references to segments that do not exist', async () => {
    await createBaseline();
    const response = await create({ key: 'ghostly', name: 'x', rule: and(proPlan, ref('pro-users'), ref('ghost')) });
    expect(await errorsOf(response)).toEqual([{ pointer: '/rule/operands/2/segment', message: 'no segment with key "ghost" exists in this workspace' }]);
  });

  it('answers 422 for a self reference and for a change that would close a cycle', async () => {
    await createBaseline();
    const self = await create({ key: 'narcissus', name: 'x', rule: and(proPlan, ref('narcissus')) });
    expect(await errorsOf(self)).toEqual([{ pointer: '/rule/operands/1/segment', message: expect.stringMatching(/cycle: narcissus → narcissus/) }]);
    // pro-everyone already refers to pro-users; pro-users referring back closes the loop.
    const cycle = await call('PATCH', `/v1/segments/${await idOf('pro-users')}`, { rule: and(proPlan, ref('pro-everyone')) });
    expect(await errorsOf(cycle)).toEqual([
      { pointer: '/rule/operands/1/segment', message: expect.stringMatching(/cycle: pro-users → pro-everyone → pro-users/) },
    ]);
    expect((await call('GET', `/v1/segments/${await idOf('pro-users')}`)).body.rule).toEqual(proPlan);
  });

  it('allows five levels of references and refuses a sixth', async () => {
    await createChain();
    const tooDeep = await create({ key: 'level-0', name: 'x', rule: ref('level-1') });
    expect(await errorsOf(tooDeep)).toEqual([
      { pointer: '/rule/segment', message: expect.stringMatching(/nest 6 levels deep \(level-0 → level-1 → .* → level-5\); at most 5/) },
    ]);
    // Deepening the bottom of the chain is refused too, seen from the top.
    expect((await create({ key: 'bottom', name: 'x', rule: proPlan })).status).toBe(201);
    const deeper = await call('PATCH', `/v1/segments/${await idOf('level-5')}`, { rule: ref('bottom') });
    expect((await errorsOf(deeper))[0]?.message).toMatch(/level-1 → level-2 → level-3 → level-4 → level-5 → bottom/);
  });

  it('never lets two concurrent saves close a cycle between them', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = [`race-a-${round}`, `race-b-${round}`];
      expect((await create({ key: a, name: 'x', rule: proPlan })).status).toBe(201);
      expect((await create({ key: b, name: 'x', rule: proPlan })).status).toBe(201);
      const [idA, idB] = [await idOf(a), await idOf(b)];
      const results = await Promise.all([call('PATCH', `/v1/segments/${idA}`, { rule: ref(b) }), call('PATCH', `/v1/segments/${idB}`, { rule: ref(a) })]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
      for (const id of [idA, idB]) expect((await call('PATCH', `/v1/segments/${id}`, { rule: null })).status).toBe(200);
      for (const id of [idA, idB]) expect((await call('DELETE', `/v1/segments/${id}`)).status).toBe(204);
    }
  });

  it('answers 409 for a duplicate key without auditing or notifying', async () => {
    await createBaseline();
    const before = await call('GET', '/v1/audit?action=segment.created&limit=200');
    notified.length = 0;
    const duplicate = await create({ key: 'pro-users', name: 'Again', rule: null });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toBe('https://verdict.dev/problems/key-taken');
    expect(duplicate.body.detail).toMatch(/"pro-users"/);
    expect((await call('GET', '/v1/audit?action=segment.created&limit=200')).body.data).toHaveLength(before.body.data.length);
    expect(notified).toEqual([]);
  });

  it('patches name, description and rule, auditing only what changed', async () => {
    await createBaseline();
    const id = await idOf('everyone');
    notified.length = 0;
    const patched = await call('PATCH', `/v1/segments/${id}`, { key: 'everyone', name: 'All units', description: null, rule: proPlan });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ key: 'everyone', name: 'All units', description: null, rule: proPlan, updated_at: expect.stringMatching(ISO) });
    expect((await call('GET', `/v1/segments/${id}`)).body).toEqual(patched.body);
    expect(notified).toEqual([acme.workspaceId]);
    const audit = await call('GET', `/v1/audit?action=segment.updated&target_id=${id}`);
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        actor_id: acme.keyId,
        payload: {
          key: 'everyone',
          changes: {
            name: { from: 'Everyone', to: 'All units' },
            description: { from: 'matches all units', to: null },
            rule: { from: null, to: proPlan },
          },
        },
      }),
    ]);
    const unchanged = await call('PATCH', `/v1/segments/${id}`, { name: 'All units' });
    expect(unchanged.body).toEqual(patched.body);
    expect((await call('GET', `/v1/audit?action=segment.updated&target_id=${id}`)).body.data).toHaveLength(1);
    expect(notified).toEqual([acme.workspaceId]);
  });

  it('refuses to change the key, and validates patched rules like new ones', async () => {
    await createBaseline();
    const id = await idOf('everyone');
    expect(await errorsOf(await call('PATCH', `/v1/segments/${id}`, { key: 'renamed' }))).toEqual([
      { pointer: '/key', message: expect.stringMatching(/cannot change/) },
    ]);
    expect(await errorsOf(await call('PATCH', `/v1/segments/${id}`, { rule: { attribute: 'age', op: 'gt', value: 'old' } }))).toEqual([
      { pointer: '/rule/value', message: expect.any(String) },
    ]);
    expect(await errorsOf(await call('PATCH', `/v1/segments/${id}`, { rule: ref('nobody') }))).toEqual([
      { pointer: '/rule/segment', message: expect.stringMatching(/"nobody"/) },
    ]);
    expect(await errorsOf(await call('PATCH', `/v1/segments/${id}`, { name: '' }))).toEqual([{ pointer: '/name', message: expect.any(String) }]);
    expect((await call('PATCH', '/v1/segments/01ARZ3NDEKTSV4RRFFQ69G5FAV', { name: 'x' })).status).toBe(404);
  });

  it('refuses to delete a segment another segment refers to, naming the referrer', async () => {
    await createBaseline();
    const refused = await call('DELETE', `/v1/segments/${await idOf('pro-users')}`);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('https://verdict.dev/problems/segment-in-use');
    expect(refused.body.detail).toMatch(/segment "pro-users" is still referred to by segment "pro-everyone"/);
    expect(refused.body.referrers).toEqual([{ type: 'segment', id: await idOf('pro-everyone'), key: 'pro-everyone' }]);
  });

  it('refuses to delete a segment a non-archived experiment refers to; archived ones do not count', async () => {
    await createBaseline();
    expect((await create({ key: 'beta', name: 'Beta', rule: proPlan })).status).toBe(201);
    const betaId = await idOf('beta');
    const running = await insertExperiment(server(), acme, 'checkout-button', and(proPlan, { operator: 'not', operands: [ref('beta')] }), 'running');
    await insertExperiment(server(), acme, 'old-test', ref('beta'), 'archived');
    await insertExperiment(server(), acme, 'unrelated', ref('pro-users'), 'draft');
    const refused = await call('DELETE', `/v1/segments/${betaId}`);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('https://verdict.dev/problems/segment-in-use');
    expect(refused.body.detail).toMatch(/experiment "checkout-button"/);
    expect(refused.body.referrers).toEqual([{ type: 'experiment', id: running, key: 'checkout-button' }]);

    await server().ctx.db.updateTable('experiments').set({ status: 'archived' }).where('id', '=', running).execute();
    expect((await call('DELETE', `/v1/segments/${betaId}`)).status).toBe(204);
  });

  it('deletes an unreferenced segment with 204, audits it, notifies, and frees the key', async () => {
    await createBaseline();
    const id = await idOf('pro-everyone');
    notified.length = 0;
    const deleted = await call('DELETE', `/v1/segments/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(notified).toEqual([acme.workspaceId]);
    expect((await call('GET', `/v1/segments/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/segments/${id}`)).status).toBe(404);
    const audit = await call('GET', `/v1/audit?action=segment.deleted&target_id=${id}`);
    expect(audit.body.data).toEqual([expect.objectContaining({ actor_id: acme.keyId, payload: { key: 'pro-everyone', name: 'Nested' } })]);
    expect((await create({ key: 'pro-everyone', name: 'Reborn', rule: null })).status).toBe(201);
  });

  it('pages the list oldest first', async () => {
    await createBaseline();
    await createChain();
    expect((await create({ key: 'bottom', name: 'x', rule: proPlan })).status).toBe(201);
    // A deleted segment leaves the list; created again, it is the newest.
    expect((await call('DELETE', `/v1/segments/${await idOf('pro-everyone')}`)).status).toBe(204);
    expect((await create({ key: 'pro-everyone', name: 'Reborn', rule: null })).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call('GET', `/v1/segments?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.data.map((s: { key: string }) => s.key));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['pro-users', 'everyone', 'level-5', 'level-4', 'level-3', 'level-2', 'level-1', 'bottom', 'pro-everyone']);
  });

  it('keeps workspaces apart', async () => {
    await createBaseline();
    const globex = await server().bootstrap('Globex');
    const id = await idOf('pro-users');
    expect((await call('GET', '/v1/segments', undefined, globex.key)).body).toEqual({ data: [], next_cursor: null });
    expect((await call('GET', `/v1/segments/${id}`, undefined, globex.key)).status).toBe(404);
    expect((await call('PATCH', `/v1/segments/${id}`, { name: 'mine' }, globex.key)).status).toBe(404);
    expect((await call('DELETE', `/v1/segments/${id}`, undefined, globex.key)).status).toBe(404);
    // Another workspace's segments are unknown to this one, and its keys are free here.
    expect(await errorsOf(await create({ key: 'mine', name: 'x', rule: ref('pro-users') }, globex.key))).toEqual([
      { pointer: '/rule/segment', message: expect.stringMatching(/"pro-users"/) },
    ]);
    expect((await create({ key: 'pro-users', name: 'Ours', rule: null }, globex.key)).status).toBe(201);
    expect((await call('GET', `/v1/segments/${id}`)).body.name).toBe('Pro users');
  });

  it('refuses client keys (403) on every operation', async () => {
    await createBaseline();
    const client = await call('POST', '/v1/api-keys', { name: 'sdk', kind: 'client' });
    const clientKey = client.body.key as string;
    const id = await idOf('pro-users');
    expect((await call('GET', '/v1/segments', undefined, clientKey)).status).toBe(403);
    expect((await create({ key: 'x', name: 'x', rule: null }, clientKey)).status).toBe(403);
    expect((await call('GET', `/v1/segments/${id}`, undefined, clientKey)).status).toBe(403);
    expect((await call('PATCH', `/v1/segments/${id}`, { name: 'x' }, clientKey)).status).toBe(403);
    expect((await call('DELETE', `/v1/segments/${id}`, undefined, clientKey)).status).toBe(403);
  });
});
