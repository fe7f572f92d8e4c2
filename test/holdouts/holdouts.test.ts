import { beforeAll, expect, it } from 'vitest';
import { runningExperiment } from '../experiments/helpers.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { answersFor, heldOut, startedHoldout, unitIds } from './support.js';

describeEachDialect('holdouts', (server) => {
  let key: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
  });

  const units = unitIds('user', 400);

  it('holds the same units out of every covered experiment with the control, before and after a launch', async () => {
    // Started before the holdout: not covered by default.
    await runningExperiment(server(), key, environmentId, { key: 'before-holdout' });
    const holdout = await startedHoldout(server(), key, { environment_id: environmentId, percent: 15 });
    expect(holdout).toMatchObject({ status: 'running', coverage: 'started_after', experiment_ids: null, percent: 15 });
    const first = await runningExperiment(server(), key, environmentId, { key: 'covered-one' });
    await runningExperiment(server(), key, environmentId, {
      key: 'covered-two',
      variants: [
        { key: 'a', weight: 34 },
        { key: 'base', weight: 33, is_control: true },
        { key: 'c', weight: 33 },
      ],
    });

    const one = await answersFor(server(), key, 'covered-one', units);
    const two = await answersFor(server(), key, 'covered-two', units);
    const held = heldOut(one);
    // 15% of 400 units: 60 expected; the binomial sd is about 7.
    expect(held.length).toBeGreaterThan(35);
    expect(held.length).toBeLessThan(85);
    expect(heldOut(two)).toEqual(held);
    for (const unit of held) {
      expect(one.get(unit)).toEqual({ experiment_key: 'covered-one', unit_id: unit, variant: 'control', reason: 'holdout', holdout_id: holdout.id });
      expect(two.get(unit)).toMatchObject({ variant: 'base', reason: 'holdout', holdout_id: holdout.id });
    }
    expect(heldOut(await answersFor(server(), key, 'before-holdout', units))).toEqual([]);
    // Nothing is stored for a held-out unit: no sticky row, no exposure.
    const stored = await server().ctx.db.selectFrom('exposures').select('unit_id').where('experiment_id', '=', first.id).execute();
    expect(stored.map((row) => row.unit_id).filter((unit) => held.includes(unit))).toEqual([]);
    expect(stored).toHaveLength(units.length - held.length);

    // The batch and OFREP answer the same.
    const sample = held[0] as string;
    const batch = await server().request('POST', '/v1/assign/batch', { key, body: { experiments: ['covered-one', 'covered-two'], unit_id: sample } });
    expect(batch.body.assignments['covered-two']).toMatchObject({ variant: 'base', reason: 'holdout', holdout_id: holdout.id });
    const flag = await server().request('POST', '/ofrep/v1/evaluate/flags/covered-one', { key, body: { context: { targetingKey: sample } } });
    expect(flag.body).toMatchObject({ value: 'control', metadata: { verdict_reason: 'holdout', holdout_id: holdout.id } });

    // After a launch the held-out units keep the status quo; everyone else gets the launch.
    await server().request('POST', `/v1/experiments/${first.id}/stop`, { key, body: { reason: 'won' } });
    expect((await server().request('POST', `/v1/experiments/${first.id}/launch`, { key, body: { variant_key: 'green' } })).status).toBe(200);
    const launched = await answersFor(server(), key, 'covered-one', [...units, ...unitIds('newcomer', 200)]);
    for (const [unit, answer] of launched) {
      if (heldOut(new Map([[unit, answer]])).length === 1) expect(answer).toMatchObject({ variant: 'control', holdout_id: holdout.id });
      else expect(answer).toMatchObject({ variant: 'green', reason: 'launched' });
    }
    expect(heldOut(launched).filter((unit) => unit.startsWith('user-'))).toEqual(held);
    const covered = await server().request('GET', `/v1/holdouts/${holdout.id}/experiments`, { key });
    expect(covered.body.covered.map((e: { key: string }) => e.key)).toEqual(['covered-one', 'covered-two']);
    expect(covered.body.covered[0]).toMatchObject({ launched_variant_key: 'green', launched_at: expect.any(String) });

    // Ending the holdout releases its units.
    expect((await server().request('POST', `/v1/holdouts/${holdout.id}/end`, { key })).body.status).toBe('ended');
    expect((await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'covered-one', unit_id: sample } })).body).toMatchObject({
      variant: 'green',
      reason: 'launched',
    });
    expect((await server().request('POST', `/v1/holdouts/${holdout.id}/archive`, { key })).body.status).toBe('archived');
  });

  it('keeps every held-out unit held out when the percentage grows', async () => {
    const { key: wsKey, environmentId: env } = await server().bootstrap('Growing');
    const holdout = await startedHoldout(server(), wsKey, { environment_id: env, percent: 5 });
    await runningExperiment(server(), wsKey, env, { key: 'grows' });
    const small = heldOut(await answersFor(server(), wsKey, 'grows', units));
    expect(small.length).toBeGreaterThan(5);
    const grown = await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key: wsKey, body: { percent: 20 } });
    expect(grown.status, grown.text).toBe(200);
    const large = heldOut(await answersFor(server(), wsKey, 'grows', units));
    expect(large.length).toBeGreaterThan(small.length * 2);
    expect(small.filter((unit) => !large.includes(unit))).toEqual([]);
    // A running holdout cannot shrink (it would release units) nor change what it covers.
    const shrink = await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key: wsKey, body: { percent: 10 } });
    expect(shrink.status).toBe(409);
    expect(shrink.body.type).toBe('https://verdict.dev/problems/holdout-not-editable');
    expect((await server().request('GET', `/v1/holdouts/${holdout.id}`, { key: wsKey })).body.percent).toBe(20);
    expect((await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key: wsKey, body: { unit_type: 'account' } })).status).toBe(409);
  });

  it('covers only the listed experiments, and never one that opted out', async () => {
    const { key: wsKey, environmentId: env } = await server().bootstrap('Listed');
    const listedOne = await runningExperiment(server(), wsKey, env, { key: 'listed' });
    const optingOut = await runningExperiment(server(), wsKey, env, { key: 'opting-out' });
    const holdout = await startedHoldout(server(), wsKey, { environment_id: env, percent: 20, experiment_ids: [listedOne.id, optingOut.id] });
    expect(holdout.coverage).toBe('listed');
    await runningExperiment(server(), wsKey, env, { key: 'not-listed' });
    const optOut = await server().request('PUT', `/v1/experiments/${optingOut.id}/holdout-opt-out`, {
      key: wsKey,
      body: { reason: 'a security fix must reach everyone' },
    });
    expect(optOut.status, optOut.text).toBe(200);

    expect(heldOut(await answersFor(server(), wsKey, 'listed', units)).length).toBeGreaterThan(40);
    expect(heldOut(await answersFor(server(), wsKey, 'not-listed', units))).toEqual([]);
    expect(heldOut(await answersFor(server(), wsKey, 'opting-out', units))).toEqual([]);
    const experiments = await server().request('GET', `/v1/holdouts/${holdout.id}/experiments`, { key: wsKey });
    expect(experiments.body.covered.map((e: { key: string }) => e.key)).toEqual(['listed']);
    expect(experiments.body.opted_out).toEqual([
      { id: optingOut.id, key: 'opting-out', name: expect.any(String), reason: 'a security fix must reach everyone', opted_out_at: expect.any(String) },
    ]);
    const note = await server().request('GET', `/v1/experiments/${listedOne.id}/holdouts`, { key: wsKey });
    expect(note.body).toEqual({ holdouts: [{ id: holdout.id, name: 'Quarter', percent: 20, status: 'running' }], opt_out: null });

    expect((await server().request('DELETE', `/v1/experiments/${optingOut.id}/holdout-opt-out`, { key: wsKey })).status).toBe(204);
    expect(heldOut(await answersFor(server(), wsKey, 'opting-out', units)).length).toBeGreaterThan(40);
    const audit = await server().request('GET', `/v1/audit?target_id=${optingOut.id}`, { key: wsKey });
    expect(audit.body.data.map((entry: { action: string }) => entry.action)).toEqual(
      expect.arrayContaining(['experiment.holdout_opted_out', 'experiment.holdout_opt_out_removed']),
    );
  });

  it('refuses bad input with problems naming the field, and lifecycle moves out of order with 409', async () => {
    const bad = async (body: Record<string, unknown>) =>
      server().request('POST', '/v1/holdouts', { key, body: { name: 'Bad', unit_type: 'user', environment_id: environmentId, percent: 5, ...body } });
    expect((await bad({ percent: 25 })).body.errors[0].pointer).toBe('/percent');
    expect((await bad({ percent: 0.1 })).body.errors[0].pointer).toBe('/percent');
    expect((await bad({ percent: 1.234 })).body.errors[0].pointer).toBe('/percent');
    expect((await bad({ environment_id: '01JBZ5Q3M4N8V2W6X7Y9Z0ABCD' })).body.errors[0].pointer).toBe('/environment_id');
    expect((await bad({ experiment_ids: ['01JBZ5Q3M4N8V2W6X7Y9Z0ABCD'] })).body.errors[0].pointer).toBe('/experiment_ids/0');
    const account = await runningExperiment(server(), key, environmentId, { key: 'account-level', unit_type: 'account' });
    const mismatch = await bad({ experiment_ids: [account.id] });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.errors[0]).toMatchObject({ pointer: '/experiment_ids/0' });

    const created = await server().request('POST', '/v1/holdouts', {
      key,
      body: { name: 'Draft', unit_type: 'user', environment_id: environmentId, percent: 2.5 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'draft', percent: 2.5, started_at: null });
    expect((await server().request('PATCH', `/v1/holdouts/${created.body.id}`, { key, body: { percent: 1, name: 'Renamed' } })).body).toMatchObject({
      percent: 1,
      name: 'Renamed',
    });
    expect((await server().request('POST', `/v1/holdouts/${created.body.id}/end`, { key })).status).toBe(409);
    expect((await server().request('POST', `/v1/holdouts/${created.body.id}/start`, { key })).status).toBe(200);
    expect((await server().request('POST', `/v1/holdouts/${created.body.id}/start`, { key })).status).toBe(409);
    expect((await server().request('GET', '/v1/holdouts/01JBZ5Q3M4N8V2W6X7Y9Z0ABCD', { key })).status).toBe(404);
    const list = await server().request('GET', '/v1/holdouts?status=running', { key });
    expect(list.body.data.map((h: { id: string }) => h.id)).toContain(created.body.id);
    const audit = await server().request('GET', `/v1/audit?target_id=${created.body.id}`, { key });
    expect(audit.body.data.map((entry: { action: string }) => entry.action).sort()).toEqual(['holdout.created', 'holdout.started', 'holdout.updated']);
    // Another workspace sees none of it.
    const other = await server().bootstrap('Elsewhere');
    expect((await server().request('GET', `/v1/holdouts/${created.body.id}`, { key: other.key })).status).toBe(404);
    await server().request('POST', `/v1/holdouts/${created.body.id}/end`, { key });
  });
});
