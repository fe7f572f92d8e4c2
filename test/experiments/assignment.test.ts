import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { runningExperiment } from './helpers.js';

describeEachDialect('sticky assignment', (server) => {
  let key: string;
  let environmentId: string;
  let clientKey: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    clientKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'web', kind: 'client' } })).body.key;
  });

  const exposuresOf = (experimentId: string, unitId: string) =>
    server().ctx.db.selectFrom('exposures').selectAll().where('experiment_id', '=', experimentId).where('unit_id', '=', unitId).execute();

  it('stores the first assignment with one exposure and returns it ever after', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'sticky' });
    const first = await server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key: 'sticky', unit_id: 'user-1' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ experiment_key: 'sticky', unit_id: 'user-1', reason: 'bucketed', assignment_id: expect.any(String) });
    expect(['control', 'green']).toContain(first.body.variant);
    expect(first.body.exposure_logged_at).toEqual(expect.any(String));
    for (let i = 0; i < 3; i++) {
      const again = await server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key: 'sticky', unit_id: 'user-1' } });
      expect(again.body).toEqual(first.body);
      // Answered from the cache with the bytes the route's serialiser wrote the first time.
      expect(again.text).toBe(first.text);
      expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
    const otherUnit = await server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key: 'sticky', unit_id: 'user-2' } });
    const otherAgain = await server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key: 'sticky', unit_id: 'user-2' } });
    expect(otherAgain.body).toMatchObject({ unit_id: 'user-2', assignment_id: otherUnit.body.assignment_id });
    expect(otherAgain.body.assignment_id).not.toBe(first.body.assignment_id);
    expect(await exposuresOf(experiment.id, 'user-1')).toHaveLength(1);
  });

  it('keeps a stored variant when weights change later', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'reweigh' });
    const units = Array.from({ length: 20 }, (_, i) => `unit-${i}`);
    const before = await Promise.all(units.map((unit_id) => server().request('POST', '/v1/assign', { key, body: { experiment_key: 'reweigh', unit_id } })));
    await server().request('PATCH', `/v1/experiments/${experiment.id}`, {
      key,
      body: {
        variants: [
          { key: 'control', weight: 100 },
          { key: 'green', weight: 0 },
        ],
      },
    });
    const after = await Promise.all(units.map((unit_id) => server().request('POST', '/v1/assign', { key, body: { experiment_key: 'reweigh', unit_id } })));
    expect(after.map((r) => r.body.variant)).toEqual(before.map((r) => r.body.variant));
    const fresh = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'reweigh', unit_id: 'newcomer' } });
    expect(fresh.body.variant).toBe('control');
  });

  it('answers 404 unless the experiment is running in the key’s environment', async () => {
    const draft = await server().request('POST', '/v1/experiments', {
      key,
      body: {
        environment_id: environmentId,
        key: 'still-draft',
        name: 'd',
        hypothesis: 'h',
        unit_type: 'user',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      },
    });
    expect(draft.status).toBe(201);
    expect((await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'still-draft', unit_id: 'u' } })).status).toBe(404);
    expect((await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'no-such', unit_id: 'u' } })).status).toBe(404);
    const staging = await server().request('POST', '/v1/environments', { key, body: { name: 'Staging', slug: 'staging' } });
    const stagingKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 's', kind: 'client', environment_id: staging.body.id } })).body.key;
    expect((await server().request('POST', '/v1/assign', { key: stagingKey, body: { experiment_key: 'sticky', unit_id: 'u' } })).status).toBe(404);
    const stopped = await runningExperiment(server(), key, environmentId, { key: 'to-stop' });
    await server().request('POST', `/v1/experiments/${stopped.id}/stop`, { key, body: { reason: 'bug' } });
    expect((await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'to-stop', unit_id: 'u' } })).status).toBe(404);
  });

  it('excludes units outside the audience without storing them', async () => {
    await runningExperiment(server(), key, environmentId, { key: 'targeted', audience: { attribute: 'country', op: 'in', value: ['NL', 'BE'] } });
    const excluded = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'targeted', unit_id: 'u-x', context: { country: 'US' } } });
    expect(excluded.body).toEqual({ experiment_key: 'targeted', unit_id: 'u-x', variant: null, reason: 'audience_excluded' });
    const listed = await server().request('GET', '/v1/assignments/u-x', { key });
    expect(listed.body).toEqual({ unit_id: 'u-x', assignments: [] });
    const included = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'targeted', unit_id: 'u-x', context: { country: 'NL' } } });
    expect(included.body.reason).toBe('bucketed');
    const tooBig = await server().request('POST', '/v1/assign', {
      key,
      body: { experiment_key: 'targeted', unit_id: 'u-y', context: { blob: 'x'.repeat(5000) } },
    });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.errors[0].pointer).toBe('/context');
  });

  it('logs a deferred exposure once and refuses a different variant', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'deferred' });
    const assigned = await server().request('POST', '/v1/assign', {
      key: clientKey,
      body: { experiment_key: 'deferred', unit_id: 'd-1', log_exposure: false },
    });
    expect(assigned.body.exposure_logged_at).toBeNull();
    expect(await exposuresOf(experiment.id, 'd-1')).toHaveLength(0);
    const other = assigned.body.variant === 'control' ? 'green' : 'control';
    const wrong = await server().request('POST', '/v1/exposures', { key: clientKey, body: { experiment_key: 'deferred', unit_id: 'd-1', variant: other } });
    expect(wrong.status).toBe(409);
    expect(wrong.body.type).toBe('https://verdict.dev/problems/assigned-variant-differs');
    for (let i = 0; i < 2; i++) {
      const logged = await server().request('POST', '/v1/exposures', {
        key: clientKey,
        body: { experiment_key: 'deferred', unit_id: 'd-1', variant: assigned.body.variant },
      });
      expect(logged.status).toBe(202);
      expect(logged.text).toBe('');
    }
    expect(await exposuresOf(experiment.id, 'd-1')).toHaveLength(1);
    const later = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'deferred', unit_id: 'd-1' } });
    expect(later.body.exposure_logged_at).toEqual(expect.any(String));
    const unassigned = await server().request('POST', '/v1/exposures', {
      key: clientKey,
      body: { experiment_key: 'deferred', unit_id: 'never', variant: 'control' },
    });
    expect(unassigned.status).toBe(409);
    expect(unassigned.body.type).toBe('https://verdict.dev/problems/unit-not-assigned');
  });

  it('pins a unit with an override for QA and removes the pin', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'qa' });
    const natural = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'qa', unit_id: 'qa-1' } });
    const pinned = natural.body.variant === 'control' ? 'green' : 'control';
    const put = await server().request('PUT', `/v1/experiments/${experiment.id}/overrides/qa-1`, { key, body: { variant: pinned } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ experiment_id: experiment.id, unit_id: 'qa-1', variant: pinned });
    const forced = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'qa', unit_id: 'qa-1' } });
    expect(forced.body).toEqual({ experiment_key: 'qa', unit_id: 'qa-1', variant: pinned, reason: 'forced' });
    const bad = await server().request('PUT', `/v1/experiments/${experiment.id}/overrides/qa-1`, { key, body: { variant: 'purple' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].pointer).toBe('/variant');
    expect((await server().request('DELETE', `/v1/experiments/${experiment.id}/overrides/qa-1`, { key })).status).toBe(204);
    expect((await server().request('DELETE', `/v1/experiments/${experiment.id}/overrides/qa-1`, { key })).status).toBe(404);
    const back = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'qa', unit_id: 'qa-1' } });
    expect(back.body.variant).toBe(natural.body.variant);
    const actions = (await server().request('GET', `/v1/audit?target_id=${experiment.id}`, { key })).body.data.map((e: { action: string }) => e.action);
    expect(actions.slice(0, 2)).toEqual(['experiment.override_removed', 'experiment.override_set']);
    expect((await server().request('PUT', `/v1/experiments/${experiment.id}/overrides/qa-2`, { key: clientKey, body: { variant: 'green' } })).status).toBe(403);
  });

  it('re-buckets a unit: deletes the assignment, supersedes its exposures, audits, and assigns afresh', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'rebucket' });
    const first = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'rebucket', unit_id: 'r-1' } });
    expect((await server().request('DELETE', '/v1/assignments/rebucket/r-1', { key })).status).toBe(204);
    const exposures = await exposuresOf(experiment.id, 'r-1');
    expect(exposures).toHaveLength(1);
    expect(exposures[0]?.superseded_at).toEqual(expect.any(Number));
    const audit = await server().request('GET', `/v1/audit?action=assignment.rebucketed&target_id=${experiment.id}`, { key });
    expect(audit.body.data[0].payload).toMatchObject({ unit_id: 'r-1', previous_variant: first.body.variant, superseded_exposures: 1 });
    const second = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'rebucket', unit_id: 'r-1' } });
    expect(second.body.assignment_id).not.toBe(first.body.assignment_id);
    const all = await exposuresOf(experiment.id, 'r-1');
    expect(all.filter((e) => e.superseded_at === null)).toHaveLength(1);
    expect((await server().request('DELETE', `/v1/assignments/${experiment.id}/r-1`, { key })).status).toBe(204);
    expect((await server().request('DELETE', `/v1/assignments/${experiment.id}/r-1`, { key })).status).toBe(404);
    expect((await server().request('DELETE', '/v1/assignments/unknown-exp/r-1', { key })).status).toBe(404);
  });

  it('assigns a batch and lists a unit’s assignments', async () => {
    await runningExperiment(server(), key, environmentId, { key: 'batch-a' });
    await runningExperiment(server(), key, environmentId, { key: 'batch-b' });
    const batch = await server().request('POST', '/v1/assign/batch', {
      key: clientKey,
      body: { experiments: ['batch-a', 'batch-b', 'missing'], unit_id: 'b-1' },
    });
    expect(batch.status).toBe(200);
    expect(Object.keys(batch.body.assignments).sort()).toEqual(['batch-a', 'batch-b']);
    expect(batch.body.not_found).toEqual(['missing']);
    const tooMany = await server().request('POST', '/v1/assign/batch', {
      key,
      body: { experiments: Array.from({ length: 51 }, (_, i) => `k${i}`), unit_id: 'b-1' },
    });
    expect(tooMany.status).toBe(422);
    const listed = await server().request('GET', '/v1/assignments/b-1', { key });
    expect(listed.body.assignments.map((a: { experiment_key: string }) => a.experiment_key).sort()).toEqual(['batch-a', 'batch-b']);
    expect((await server().request('GET', '/v1/assignments/b-1', { key: clientKey })).status).toBe(403);
    // The path takes what the body takes: 256 characters, whatever their UTF-8 length.
    const long = encodeURIComponent('é'.repeat(257));
    expect((await server().request('GET', `/v1/assignments/${long}`, { key })).status).toBe(400);
  });

  it('stores one assignment and one exposure when 50 first assigns race', async () => {
    const experiment = await runningExperiment(server(), key, environmentId, { key: 'race' });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => server().request('POST', '/v1/assign', { key: clientKey, body: { experiment_key: 'race', unit_id: 'racer' } })),
    );
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(responses.map((r) => r.body.variant)).size).toBe(1);
    expect(new Set(responses.map((r) => r.body.assignment_id)).size).toBe(1);
    const rows = await server().ctx.db.selectFrom('assignments').selectAll().where('experiment_id', '=', experiment.id).execute();
    expect(rows).toHaveLength(1);
    expect(await exposuresOf(experiment.id, 'racer')).toHaveLength(1);
  });

  it('never lets two experiments of a mutex group both assign a unit', async () => {
    const group = await server().request('POST', '/v1/mutex-groups', { key, body: { key: 'exclusive', name: 'Exclusive' } });
    await runningExperiment(server(), key, environmentId, { key: 'mx-a', mutex_group_id: group.body.id });
    await runningExperiment(server(), key, environmentId, { key: 'mx-b', mutex_group_id: group.body.id });
    const units = Array.from({ length: 25 }, (_, i) => `mx-unit-${i}`);
    const results = await Promise.all(
      units.flatMap((unit_id) =>
        ['mx-a', 'mx-b', 'mx-a', 'mx-b'].map((experiment_key) => server().request('POST', '/v1/assign', { key, body: { experiment_key, unit_id } })),
      ),
    );
    for (const unit of units) {
      const answers = results.filter((r) => r.body.unit_id === unit);
      const winners = new Set(answers.filter((r) => r.body.variant !== null).map((r) => r.body.experiment_key));
      expect(winners.size, unit).toBe(1);
      const losers = answers.filter((r) => r.body.variant === null);
      expect(losers.every((r) => r.body.reason === 'mutex_holdout')).toBe(true);
    }
    const again = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'mx-b', unit_id: units[0] } });
    const first = results.find((r) => r.body.unit_id === units[0] && r.body.experiment_key === 'mx-b');
    expect(again.body.variant).toBe(first?.body.variant);
  });

  it('splits many units in proportion to the weights (chi-squared)', async () => {
    await runningExperiment(server(), key, environmentId, {
      key: 'split',
      variants: [
        { key: 'a', weight: 20 },
        { key: 'b', weight: 30 },
        { key: 'c', weight: 50 },
      ],
    });
    const total = 3000;
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let start = 0; start < total; start += 100) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          server().request('POST', '/v1/assign', { key, body: { experiment_key: 'split', unit_id: `split-${start + i}` } }),
        ),
      );
      for (const response of batch) counts[response.body.variant as string]! += 1;
    }
    const expected = { a: 0.2 * total, b: 0.3 * total, c: 0.5 * total };
    const chiSquared = Object.entries(expected).reduce((sum, [variant, e]) => sum + (counts[variant]! - e) ** 2 / e, 0);
    // Critical value of chi-squared with 2 degrees of freedom at p = 0.001.
    expect(chiSquared).toBeLessThan(13.816);
  });
});
