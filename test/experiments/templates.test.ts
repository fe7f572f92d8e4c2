// Experiment templates (issue #52): a saved set of metrics, decision rule, allocation, variants and
// tags that a new experiment starts from; create, list, read, change and delete, each change
// audit-logged; POST /v1/experiments with template_id takes what the body leaves out from it.
// Scoped to the workspace. On SQLite and PostgreSQL.
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

describeEachDialect('experiment templates', (server) => {
  let key: string;
  let environmentId: string;
  let conversion: string;
  let latency: string;
  let revenue: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    const metric = async (body: Record<string, unknown>) => {
      const created = await server().request('POST', '/v1/metrics', { key, body: { name: String(body.key), ...body } });
      expect(created.status, created.text).toBe(201);
      return created.body.id as string;
    };
    conversion = await metric({ key: 'converted', event_key: 'buy', kind: 'binary' });
    latency = await metric({ key: 'load', event_key: 'page', kind: 'duration', aggregation: 'mean', property_path: 'ms', unit: 'ms' });
    revenue = await metric({ key: 'revenue', event_key: 'buy', kind: 'revenue', aggregation: 'sum', property_path: 'amount' });
  });

  const checkoutTemplate = () => ({
    name: 'Checkout test',
    description: 'Conversion first, page speed guarded',
    unit_type: 'account',
    variants: [
      { key: 'control', weight: 34 },
      { key: 'a', weight: 33 },
      { key: 'b', weight: 33 },
    ],
    decision_rule: { posterior_threshold: 0.99, min_sample_per_variant: 5000 },
    primary_metric_id: conversion,
    guardrail_metric_ids: [latency],
    secondary_metric_ids: [revenue],
    tags: ['Checkout', 'growth'],
  });

  async function auditOf(targetId: string) {
    const response = await server().request('GET', `/v1/audit?target_id=${targetId}`, { key });
    return response.body.data as Array<{ action: string; payload: Record<string, any> }>;
  }

  it('saves a template, audit-logged, and lists and reads it', async () => {
    const created = await server().request('POST', '/v1/experiment-templates', { key, body: checkoutTemplate() });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ ...checkoutTemplate(), tags: ['checkout', 'growth'] });
    expect(created.body.allocation).toBeUndefined();
    const read = await server().request('GET', `/v1/experiment-templates/${created.body.id}`, { key });
    expect(read.body).toEqual(created.body);
    const list = await server().request('GET', '/v1/experiment-templates', { key });
    expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(['Checkout test']);
    expect(await auditOf(created.body.id)).toEqual([expect.objectContaining({ action: 'experiment_template.created', payload: { template: created.body } })]);
  });

  it('fills what a new experiment leaves out from its template, and the body wins whole where it gives a field', async () => {
    const template = (await server().request('POST', '/v1/experiment-templates', { key, body: { ...checkoutTemplate(), name: 'For creating' } })).body;
    const created = await server().request('POST', '/v1/experiments', {
      key,
      body: {
        environment_id: environmentId,
        key: 'from-template',
        name: 'New checkout',
        hypothesis: 'Shorter is better',
        template_id: template.id,
        tags: ['q3'],
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      unit_type: 'account',
      primary_metric_id: conversion,
      guardrail_metric_ids: [latency],
      secondary_metric_ids: [revenue],
      tags: ['q3'],
      decision_rule: expect.objectContaining({ posterior_threshold: 0.99, min_sample_per_variant: 5000 }),
    });
    expect(created.body.variants.map((v: { key: string; weight: number }) => [v.key, v.weight])).toEqual([
      ['control', 34],
      ['a', 33],
      ['b', 33],
    ]);
    expect(await auditOf(created.body.id)).toEqual([
      expect.objectContaining({ action: 'experiment.created', payload: expect.objectContaining({ template: { id: template.id, name: 'For creating' } }) }),
    ]);

    const own = await server().request('POST', '/v1/experiments', {
      key,
      body: experimentBody(environmentId, { key: 'own-variants', template_id: template.id, primary_metric_id: null }),
    });
    expect(own.status, own.text).toBe(201);
    expect(own.body).toMatchObject({ unit_type: 'user', primary_metric_id: null, guardrail_metric_ids: [latency], tags: ['checkout', 'growth'] });
    expect(own.body.variants.map((v: { key: string }) => v.key)).toEqual(['control', 'green']);
  });

  it('needs the unit type and variants from the body or the template, naming the missing field', async () => {
    const bare = { environment_id: environmentId, key: 'no-variants', name: 'N', hypothesis: 'H' };
    const missing = await server().request('POST', '/v1/experiments', { key, body: bare });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/unit_type', '/variants']);
    const rulesOnly = (
      await server().request('POST', '/v1/experiment-templates', { key, body: { name: 'Rule only', decision_rule: { posterior_threshold: 0.9 } } })
    ).body;
    const still = await server().request('POST', '/v1/experiments', { key, body: { ...bare, template_id: rulesOnly.id } });
    expect(still.status).toBe(422);
    expect(still.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/unit_type', '/variants']);
  });

  it('refuses a template that names what the workspace does not have or breaks the experiment rules, and saves nothing', async () => {
    const before = (await server().request('GET', '/v1/experiment-templates?limit=200', { key })).body.data.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ primary_metric_id: '01JBZ5Q3M4N8V2W6X7Y9Z0ABCD' }, '/primary_metric_id'],
      [{ guardrail_metric_ids: [latency, '01JBZ5Q3M4N8V2W6X7Y9Z0ABCD'] }, '/guardrail_metric_ids/1'],
      [{ secondary_metric_ids: [conversion], primary_metric_id: conversion }, '/secondary_metric_ids/0'],
      [
        {
          variants: [
            { key: 'a', weight: 50 },
            { key: 'b', weight: 40 },
          ],
        },
        '/variants',
      ],
      [{ tags: ['ok', 'not,ok'] }, '/tags/1'],
      [{ name: '' }, '/name'],
      [{ unit_type: 'planet' }, '/unit_type'],
    ];
    for (const [fields, pointer] of cases) {
      const refused = await server().request('POST', '/v1/experiment-templates', { key, body: { name: 'Bad', ...fields } });
      expect(refused.status, JSON.stringify(fields)).toBe(422);
      expect(refused.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    expect((await server().request('GET', '/v1/experiment-templates?limit=200', { key })).body.data).toHaveLength(before);
  });

  it('saves a template from an experiment: its definition at its starting weights, without key, name or results', async () => {
    const source = await server().request('POST', '/v1/experiments', {
      key,
      body: experimentBody(environmentId, {
        key: 'template-source',
        primary_metric_id: conversion,
        guardrail_metric_ids: [latency],
        tags: ['pricing'],
        dimensions: ['country'],
        owner: 'Dana',
        decision_rule: { max_duration_days: 21 },
      }),
    });
    const created = await server().request('POST', '/v1/experiment-templates', {
      key,
      body: { name: 'Like the pricing test', from_experiment_id: source.body.id, tags: ['pricing', 'copied'] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      unit_type: 'user',
      primary_metric_id: conversion,
      guardrail_metric_ids: [latency],
      dimensions: ['country'],
      tags: ['pricing', 'copied'],
      decision_rule: source.body.decision_rule,
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'green', weight: 50, is_control: false },
      ],
    });
    for (const field of ['key', 'owner', 'status', 'hypothesis', 'environment_id']) expect(created.body[field]).toBeUndefined();
    expect((await auditOf(created.body.id))[0]?.payload.from_experiment).toEqual({ id: source.body.id, key: 'template-source', name: 'Checkout button' });
  });

  it('changes a template, audit-logged with what changed, and deletes it without touching experiments made from it', async () => {
    const template = (await server().request('POST', '/v1/experiment-templates', { key, body: { ...checkoutTemplate(), name: 'To change' } })).body;
    const patched = await server().request('PATCH', `/v1/experiment-templates/${template.id}`, {
      key,
      body: { name: 'Changed', guardrail_metric_ids: [], decision_rule: { posterior_threshold: 0.95 } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Changed',
      guardrail_metric_ids: [],
      primary_metric_id: conversion,
      decision_rule: { posterior_threshold: 0.95 },
    });
    const badPatch = await server().request('PATCH', `/v1/experiment-templates/${template.id}`, {
      key,
      body: { primary_metric_id: '01JBZ5Q3M4N8V2W6X7Y9Z0ABCD' },
    });
    expect(badPatch.status).toBe(422);
    expect(badPatch.body.errors[0].pointer).toBe('/primary_metric_id');
    const made = (
      await server().request('POST', '/v1/experiments', {
        key,
        body: { environment_id: environmentId, key: 'made-from-changed', name: 'M', hypothesis: 'H', template_id: template.id },
      })
    ).body;

    const deleted = await server().request('DELETE', `/v1/experiment-templates/${template.id}`, { key });
    expect(deleted.status).toBe(204);
    expect((await server().request('GET', `/v1/experiment-templates/${template.id}`, { key })).status).toBe(404);
    expect((await server().request('DELETE', `/v1/experiment-templates/${template.id}`, { key })).status).toBe(404);
    expect((await server().request('GET', `/v1/experiments/${made.id}`, { key })).body).toMatchObject({ primary_metric_id: conversion, unit_type: 'account' });
    const entries = await auditOf(template.id);
    expect(entries.map((e) => e.action).sort()).toEqual(['experiment_template.created', 'experiment_template.deleted', 'experiment_template.updated']);
    const update = entries.find((e) => e.action === 'experiment_template.updated');
    expect(Object.keys(update?.payload.changes ?? {}).sort()).toEqual(['decision_rule', 'guardrail_metric_ids', 'name']);
    expect(update?.payload.changes.name).toEqual({ from: 'To change', to: 'Changed' });
  });

  it('keeps each workspace’s templates to itself: another’s is not found, and not usable to create', async () => {
    const template = (await server().request('POST', '/v1/experiment-templates', { key, body: { name: 'Private', unit_type: 'user' } })).body;
    const other = await server().bootstrap();
    expect((await server().request('GET', `/v1/experiment-templates/${template.id}`, { key: other.key })).status).toBe(404);
    expect((await server().request('PATCH', `/v1/experiment-templates/${template.id}`, { key: other.key, body: { name: 'Mine' } })).status).toBe(404);
    expect((await server().request('DELETE', `/v1/experiment-templates/${template.id}`, { key: other.key })).status).toBe(404);
    expect((await server().request('GET', '/v1/experiment-templates', { key: other.key })).body.data).toEqual([]);
    const refused = await server().request('POST', '/v1/experiments', {
      key: other.key,
      body: experimentBody(other.environmentId, { template_id: template.id }),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ pointer: '/template_id' })]);
    const fromOthers = await server().request('POST', '/v1/experiment-templates', { key: other.key, body: { name: 'Sneaky', primary_metric_id: conversion } });
    expect(fromOthers.status).toBe(422);
    expect(fromOthers.body.errors[0].pointer).toBe('/primary_metric_id');
    expect((await server().request('GET', `/v1/experiment-templates/${template.id}`, { key })).body.name).toBe('Private');
  });
});
