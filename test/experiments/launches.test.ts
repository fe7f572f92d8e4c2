import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { runningExperiment } from './helpers.js';

describeEachDialect('launching a variant', (server) => {
  let key: string;
  let environmentId: string;
  let clientKey: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    clientKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'web', kind: 'client' } })).body.key;
  });

  const assign = (experiment_key: string, unit_id: string, context?: Record<string, unknown>) =>
    server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key, unit_id, ...(context ? { context } : {}) } });
  const stop = (id: string) => server().request('POST', `/v1/experiments/${id}/stop`, { key, body: { reason: 'won' } });
  const launch = (id: string, body: Record<string, unknown>) => server().request('POST', `/v1/experiments/${id}/launch`, { key, body });
  const rowsOf = async (experimentId: string) => ({
    assignments: (await server().ctx.db.selectFrom('assignments').select('unit_id').where('experiment_id', '=', experimentId).execute()).length,
    exposures: (await server().ctx.db.selectFrom('exposures').select('unit_id').where('experiment_id', '=', experimentId).execute()).length,
  });

  it('serves the launched variant to every unit, assigned before or never, storing nothing, until archived', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'launch-all' });
    const before = await Promise.all(['old-1', 'old-2', 'old-3', 'old-4'].map((unit) => assign('launch-all', unit)));
    expect(new Set(before.map((r) => r.body.reason))).toEqual(new Set(['bucketed']));
    expect((await stop(experiment.id)).status).toBe(200);
    expect((await assign('launch-all', 'old-1')).status).toBe(404);

    const launched = await launch(experiment.id, { variant_key: 'green', reason: 'won on checkout rate' });
    expect(launched.status, launched.text).toBe(200);
    expect(launched.body).toMatchObject({
      status: 'stopped',
      launched_variant_key: 'green',
      launch_reason: 'won on checkout rate',
      launched_at: expect.any(String),
    });
    const stored = await rowsOf(experiment.id);

    for (const unit of ['old-1', 'old-2', 'old-3', 'old-4', 'never-1', 'never-2', 'never-1']) {
      const answer = await assign('launch-all', unit);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ experiment_key: 'launch-all', unit_id: unit, variant: 'green', reason: 'launched' });
    }
    const batch = await server().request('POST', '/v1/assign/batch', { key: clientKey, body: { experiments: ['launch-all'], unit_id: 'never-3' } });
    expect(batch.body).toEqual({
      assignments: { 'launch-all': { experiment_key: 'launch-all', unit_id: 'never-3', variant: 'green', reason: 'launched' } },
      not_found: [],
    });
    const flag = await server().request('POST', '/ofrep/v1/evaluate/flags/launch-all', { key: clientKey, body: { context: { targetingKey: 'never-4' } } });
    expect(flag.body).toMatchObject({ key: 'launch-all', value: 'green', variant: 'green', reason: 'STATIC', metadata: { verdict_reason: 'launched' } });
    const all = await server().request('POST', '/ofrep/v1/evaluate/flags', { key: clientKey, body: { context: { targetingKey: 'never-5' } } });
    expect(all.body.flags.map((f: { key: string }) => f.key)).toContain('launch-all');
    // A launch is not an exposure: no sticky row, no exposure, and a logged exposure is ignored.
    const exposure = await server().request('POST', '/v1/exposures', {
      key: clientKey,
      body: { experiment_key: 'launch-all', unit_id: 'never-1', variant: 'green' },
    });
    expect(exposure.status).toBe(202);
    expect(await rowsOf(experiment.id)).toEqual(stored);

    const listed = await server().request('GET', '/v1/experiments?status=stopped', { key });
    expect(listed.body.data.find((e: { id: string }) => e.id === experiment.id)).toMatchObject({ launched_variant_key: 'green' });

    expect((await server().request('DELETE', `/v1/experiments/${experiment.id}`, { key })).status).toBe(204);
    expect((await assign('launch-all', 'old-1')).status).toBe(404);
    const afterArchive = await server().request('POST', '/v1/assign/batch', { key: clientKey, body: { experiments: ['launch-all'], unit_id: 'old-1' } });
    expect(afterArchive.body).toEqual({ assignments: {}, not_found: ['launch-all'] });
    expect((await launch(experiment.id, { variant_key: 'green' })).status).toBe(409);
  });

  it('replaces a launch with another variant, audited in each step', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'relaunch' });
    await stop(experiment.id);
    expect((await launch(experiment.id, { variant_key: 'green' })).status).toBe(200);
    expect((await assign('relaunch', 'u-1')).body.variant).toBe('green');
    const again = await launch(experiment.id, { variant_key: 'control', reason: 'rolled back' });
    expect(again.body).toMatchObject({ launched_variant_key: 'control', launch_reason: 'rolled back' });
    expect((await assign('relaunch', 'u-1')).body).toMatchObject({ variant: 'control', reason: 'launched' });
    const audit = await server().request('GET', `/v1/audit?target_id=${experiment.id}`, { key });
    const launches = audit.body.data.filter((entry: { action: string }) => entry.action === 'experiment.launched');
    expect(launches.map((entry: { payload: Record<string, unknown> }) => [entry.payload.previous_variant_key, entry.payload.variant_key]).sort()).toEqual(
      [
        [null, 'green'],
        ['green', 'control'],
      ].sort(),
    );
  });

  it('refuses a running or draft experiment (409) and a variant the experiment lacks (422), changing nothing', async () => {
    const running = await runningExperiment(server(), key, environmentId, { key: 'launch-running' });
    const refused = await launch(running.id, { variant_key: 'green' });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    const draft = await server().request('POST', '/v1/experiments', {
      key,
      body: {
        environment_id: environmentId,
        key: 'launch-draft',
        name: 'd',
        hypothesis: 'h',
        unit_type: 'user',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      },
    });
    expect((await launch(draft.body.id, { variant_key: 'a' })).status).toBe(409);
    await stop(running.id);
    const unknown = await launch(running.id, { variant_key: 'purple' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ pointer: '/variant_key', message: 'must be one of "control", "green"' }]);
    expect((await launch(running.id, {})).status).toBe(422);
    expect((await server().request('GET', `/v1/experiments/${running.id}`, { key })).body.launched_variant_key).toBeNull();
    expect((await launch('01JBZ5Q3M4N8V2W6X7Y9Z0ABCD', { variant_key: 'green' })).status).toBe(404);
  });

  it('launches in the same step as the stop, or refuses the whole stop for a variant the experiment lacks', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'stop-and-launch' });
    const refused = await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'won', launch_variant_key: 'purple' } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ pointer: '/variant_key', message: 'must be one of "control", "green"' }]);
    expect((await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body.status).toBe('running');
    const stopped = await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'won', launch_variant_key: 'green' } });
    expect(stopped.body).toMatchObject({ status: 'stopped', stop_reason: 'won', launched_variant_key: 'green' });
    expect((await assign('stop-and-launch', 'fresh-unit')).body).toMatchObject({ variant: 'green', reason: 'launched' });
  });

  it('serves the launch within the audience only, and only in the experiment’s environment', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, {
      key: 'launch-targeted',
      audience: { attribute: 'country', op: 'in', value: ['NL', 'BE'] },
    });
    await stop(experiment.id);
    await launch(experiment.id, { variant_key: 'green' });
    expect((await assign('launch-targeted', 'nl-1', { country: 'NL' })).body).toMatchObject({ variant: 'green', reason: 'launched' });
    expect((await assign('launch-targeted', 'us-1', { country: 'US' })).body).toMatchObject({ variant: null, reason: 'audience_excluded' });
    const other = await server().request('POST', '/v1/environments', { key, body: { name: 'Staging', slug: 'staging-launch' } });
    const stagingKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'staging', kind: 'client', environment_id: other.body.id } })).body
      .key;
    const elsewhere = await server().request('POST', '/v1/assign', {
      key: stagingKey,
      body: { experiment_key: 'launch-targeted', unit_id: 'nl-1', context: { country: 'NL' } },
    });
    expect(elsewhere.status).toBe(404);
  });
});
