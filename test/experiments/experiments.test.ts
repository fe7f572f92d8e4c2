import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

describeEachDialect('experiments', (server) => {
  let key: string;
  let keyId: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, keyId, environmentId } = await server().bootstrap());
  });

  it('creates a draft with every default filled and the control explicit', async () => {
    const response = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { key: 'checkout' }) });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      key: 'checkout',
      status: 'draft',
      audience: null,
      primary_metric_id: null,
      guardrail_metric_ids: [],
      mutex_group_id: null,
      weights_changed_since_start: false,
      started_at: null,
      stop_reason: null,
      decision_rule: {
        method: 'bayesian.posterior_threshold',
        posterior_threshold: 0.995,
        minimum_detectable_effect: 0.02,
        min_sample_per_variant: 20000,
        max_duration_days: 28,
        snapshot_cadence_minutes: 240,
      },
    });
    expect(response.body.variants).toEqual([
      { id: expect.stringMatching(/^[0-9A-Z]{26}$/), key: 'control', weight: 50, is_control: true },
      { id: expect.stringMatching(/^[0-9A-Z]{26}$/), key: 'green', weight: 50, is_control: false },
    ]);
    const audit = await server().request('GET', `/v1/audit?target_id=${response.body.id}`, { key });
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'experiment.created', actor_id: keyId })]);
  });

  it('answers 409 for a duplicate key', async () => {
    const first = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { key: 'checkout-twice' }) });
    expect(first.status).toBe(201);
    const response = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { key: 'checkout-twice' }) });
    expect(response.status).toBe(409);
    expect(response.body.type).toBe('https://verdict.dev/problems/key-taken');
  });

  it.each([
    [
      'weights not summing to 100',
      {
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 40 },
        ],
      },
      '/variants',
    ],
    ['a single variant', { variants: [{ key: 'a', weight: 100 }] }, '/variants'],
    [
      'duplicate variant keys',
      {
        variants: [
          { key: 'a', weight: 50 },
          { key: 'a', weight: 50 },
        ],
      },
      '/variants/1/key',
    ],
    [
      'two controls',
      {
        variants: [
          { key: 'a', weight: 50, is_control: true },
          { key: 'b', weight: 50, is_control: true },
        ],
      },
      '/variants/1/is_control',
    ],
    ['a bad key', { key: 'Bad Key' }, '/key'],
    [
      'a bad variant key',
      {
        variants: [
          { key: 'A!', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      },
      '/variants/0/key',
    ],
    [
      'a fractional weight',
      {
        variants: [
          { key: 'a', weight: 50.5 },
          { key: 'b', weight: 49.5 },
        ],
      },
      '/variants/0/weight',
    ],
    ['an empty hypothesis', { hypothesis: '' }, '/hypothesis'],
    ['an unknown unit type', { unit_type: 'cookie' }, '/unit_type'],
    ['a threshold out of range', { decision_rule: { posterior_threshold: 0.3 } }, '/decision_rule/posterior_threshold'],
    ['an unknown decision method', { decision_rule: { method: 'magic' } }, '/decision_rule/method'],
    ['zero min sample', { decision_rule: { min_sample_per_variant: 0 } }, '/decision_rule/min_sample_per_variant'],
    ['an unknown environment', { environment_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }, '/environment_id'],
    ['an unknown primary metric', { primary_metric_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }, '/primary_metric_id'],
    ['an unknown guardrail metric', { guardrail_metric_ids: ['01HZZZZZZZZZZZZZZZZZZZZZZZ'] }, '/guardrail_metric_ids/0'],
    ['an unknown mutex group', { mutex_group_id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }, '/mutex_group_id'],
    ['a bad audience operator', { audience: { operator: 'xor', operands: [] } }, '/audience/operator'],
    ['an unknown audience op', { audience: { attribute: 'country', op: 'like', value: 'x' } }, '/audience/op'],
    ['an unknown segment', { audience: { segment: 'nope' } }, '/audience'],
  ])('rejects %s with 422 naming %s', async (_label, overrides, pointer) => {
    const response = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, overrides) });
    expect(response.status).toBe(422);
    expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it('follows the lifecycle: start from draft only, stop from running only, archive from anything', async () => {
    const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId) });
    const id = created.body.id;
    expect(await server().request('POST', `/v1/experiments/${id}/stop`, { key, body: { reason: 'won' } })).toMatchObject({
      status: 409,
      body: { type: 'https://verdict.dev/problems/lifecycle-move-not-allowed' },
    });
    const started = await server().request('POST', `/v1/experiments/${id}/start`, { key });
    expect(started.status).toBe(200);
    expect(started.body.status).toBe('running');
    expect(started.body.started_at).toEqual(expect.any(String));
    expect((await server().request('POST', `/v1/experiments/${id}/start`, { key })).status).toBe(409);
    expect((await server().request('POST', `/v1/experiments/${id}/stop`, { key })).status).toBe(422);
    expect((await server().request('POST', `/v1/experiments/${id}/stop`, { key, body: { reason: 'maybe' } })).status).toBe(422);
    const stopped = await server().request('POST', `/v1/experiments/${id}/stop`, { key, body: { reason: 'won', outcome_notes: 'ship it' } });
    expect(stopped.body).toMatchObject({ status: 'stopped', stop_reason: 'won', outcome_notes: 'ship it' });
    expect((await server().request('POST', `/v1/experiments/${id}/start`, { key })).status).toBe(409);
    expect(await server().request('PATCH', `/v1/experiments/${id}`, { key, body: { name: 'x' } })).toMatchObject({
      status: 409,
      body: { type: 'https://verdict.dev/problems/experiment-not-editable' },
    });
    expect((await server().request('DELETE', `/v1/experiments/${id}`, { key })).status).toBe(204);
    expect((await server().request('DELETE', `/v1/experiments/${id}`, { key })).status).toBe(204);
    const archived = await server().request('GET', `/v1/experiments/${id}`, { key });
    expect(archived.body.status).toBe('archived');
    const actions = (await server().request('GET', `/v1/audit?target_id=${id}`, { key })).body.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['experiment.archived', 'experiment.stopped', 'experiment.started', 'experiment.created']);
  });

  it('lets a running experiment change weights (flagged), name and rule, but not its variant keys or key', async () => {
    const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId) });
    const id = created.body.id;
    await server().request('POST', `/v1/experiments/${id}/start`, { key });
    const reweighted = await server().request('PATCH', `/v1/experiments/${id}`, {
      key,
      body: {
        name: 'Renamed',
        variants: [
          { key: 'green', weight: 80 },
          { key: 'control', weight: 20 },
        ],
        decision_rule: { posterior_threshold: 0.99 },
      },
    });
    expect(reweighted.status).toBe(200);
    expect(reweighted.body.variants.map((v: { key: string; weight: number }) => [v.key, v.weight])).toEqual([
      ['control', 20],
      ['green', 80],
    ]);
    expect(reweighted.body.variants[0].id).toBe(created.body.variants[0].id);
    expect(reweighted.body.weights_changed_since_start).toBe(true);
    expect(reweighted.body.decision_rule).toMatchObject({ posterior_threshold: 0.99, min_sample_per_variant: 20000 });
    const renamedKeys = await server().request('PATCH', `/v1/experiments/${id}`, {
      key,
      body: {
        variants: [
          { key: 'control', weight: 50 },
          { key: 'blue', weight: 50 },
        ],
      },
    });
    expect(renamedKeys.status).toBe(409);
    expect(renamedKeys.body.type).toBe('https://verdict.dev/problems/experiment-not-editable');
    expect((await server().request('PATCH', `/v1/experiments/${id}`, { key, body: { key: 'new-key' } })).status).toBe(409);
    const same = await server().request('PATCH', `/v1/experiments/${id}`, { key, body: { key: created.body.key, name: 'Renamed' } });
    expect(same.status).toBe(200);
    const audit = await server().request('GET', `/v1/audit?target_id=${id}&action=experiment.updated`, { key });
    expect(audit.body.data).toHaveLength(1);
    expect(Object.keys(audit.body.data[0].payload.changes).sort()).toEqual(['decision_rule', 'name', 'variants']);
  });

  it('lets a draft change anything, validated like a create', async () => {
    const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId) });
    const changed = await server().request('PATCH', `/v1/experiments/${created.body.id}`, {
      key,
      body: {
        key: 'renamed-draft',
        unit_type: 'account',
        variants: [
          { key: 'a', weight: 30 },
          { key: 'b', weight: 30 },
          { key: 'c', weight: 40, is_control: true },
        ],
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ key: 'renamed-draft', unit_type: 'account' });
    expect(changed.body.variants.find((v: { is_control: boolean }) => v.is_control).key).toBe('c');
    const bad = await server().request('PATCH', `/v1/experiments/${created.body.id}`, {
      key,
      body: {
        variants: [
          { key: 'a', weight: 1 },
          { key: 'b', weight: 1 },
        ],
      },
    });
    expect(bad.status).toBe(422);
    const unknownField = await server().request('PATCH', `/v1/experiments/${created.body.id}`, { key, body: { colour: 'red' } });
    expect(unknownField.status).toBe(422);
  });

  it('lists with a status filter and a cursor, and 404s unknown and foreign ids', async () => {
    for (const n of [1, 2, 3]) {
      const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { key: `listed-${n}` }) });
      expect(created.status).toBe(201);
    }
    const running = await server().request('GET', '/v1/experiments?status=running', { key });
    expect(running.body.data.every((e: { status: string }) => e.status === 'running')).toBe(true);
    const page = await server().request('GET', '/v1/experiments?limit=2', { key });
    expect(page.body.data).toHaveLength(2);
    const next = await server().request('GET', `/v1/experiments?limit=2&cursor=${page.body.next_cursor}`, { key });
    expect(next.body.data[0].id > page.body.data[1].id).toBe(true);
    expect((await server().request('GET', '/v1/experiments?status=paused', { key })).status).toBe(400);
    expect((await server().request('GET', '/v1/experiments/01HZZZZZZZZZZZZZZZZZZZZZZZ', { key })).status).toBe(404);
    const other = await server().bootstrap('Other');
    const foreign = page.body.data[0].id;
    expect((await server().request('GET', `/v1/experiments/${foreign}`, { key: other.key })).status).toBe(404);
    expect((await server().request('POST', `/v1/experiments/${foreign}/start`, { key: other.key })).status).toBe(404);
    expect((await server().request('DELETE', `/v1/experiments/${foreign}`, { key: other.key })).status).toBe(404);
    expect((await server().request('GET', '/v1/experiments', { key: other.key })).body.data).toEqual([]);
  });

  it('counts a mutex group’s experiments', async () => {
    const group = await server().request('POST', '/v1/mutex-groups', { key, body: { key: 'checkout-tests', name: 'Checkout tests' } });
    expect(group.status).toBe(201);
    expect(group.body.experiment_count).toBe(0);
    expect((await server().request('POST', '/v1/mutex-groups', { key, body: { key: 'checkout-tests', name: 'Again' } })).status).toBe(409);
    await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { mutex_group_id: group.body.id }) });
    await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { mutex_group_id: group.body.id }) });
    const listed = await server().request('GET', '/v1/mutex-groups', { key });
    expect(listed.body.data.find((g: { id: string }) => g.id === group.body.id).experiment_count).toBe(2);
  });
});
