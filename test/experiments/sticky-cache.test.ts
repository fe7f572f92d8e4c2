import { expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { runningExperiment } from './helpers.js';

// A stored assignment stays cached after the experiment definitions' short TTL: a returning unit
// is answered from memory. To tell memory from the database, each test removes the unit's rows
// behind the service's back (no change notice, as when a notice is lost): an assign answered
// from the database would store a new assignment and log a second exposure.

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function assignThenDropRows(server: TestServer, key: string, environmentId: string, experimentKey: string) {
  const experiment = await runningExperiment(server, key, environmentId, { key: experimentKey });
  const first = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id: 'returning-user' } });
  expect(first.status).toBe(200);
  await server.ctx.db.deleteFrom('exposures').where('experiment_id', '=', experiment.id).execute();
  await server.ctx.db.deleteFrom('assignments').where('experiment_id', '=', experiment.id).execute();
  // Past the definitions' TTL (20 ms here), so only the assignment cache can still answer.
  await pause(80);
  const again = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id: 'returning-user' } });
  expect(again.status).toBe(200);
  const exposures = await server.ctx.db.selectFrom('exposures').select('id').where('experiment_id', '=', experiment.id).execute();
  return { first: first.body, again: again.body, exposures: exposures.length };
}

describeEachDialect(
  'sticky assignments outlive the definitions cache',
  (server) => {
    it('answers a returning unit from memory after the definitions expired', async () => {
      const { key, environmentId } = await server().bootstrap();
      const { first, again, exposures } = await assignThenDropRows(server(), key, environmentId, 'sticky-memory');
      expect(again).toEqual(first);
      expect(exposures).toBe(0);
    });
  },
  { config: { assignmentCacheTtlMs: 20 } },
);

describeEachDialect(
  'sticky assignments expire after VERDICT_STICKY_CACHE_TTL_MS',
  (server) => {
    it('goes back to the database once the assignment cache expired', async () => {
      const { key, environmentId } = await server().bootstrap();
      const { first, again, exposures } = await assignThenDropRows(server(), key, environmentId, 'sticky-expired');
      // Bucketing is deterministic, so the variant is the same; the row and its exposure are new.
      expect(again.variant).toBe(first.variant);
      expect(again.assignment_id).not.toBe(first.assignment_id);
      expect(exposures).toBe(1);
    });
  },
  { config: { assignmentCacheTtlMs: 20, stickyCacheTtlMs: 20 } },
);

describeEachDialect(
  'the sticky cache holds VERDICT_STICKY_CACHE_SIZE assignments',
  (server) => {
    it('holds two of three units, and answers the one it dropped from the database, unchanged', async () => {
      const { key, environmentId } = await server().bootstrap();
      const experiment = await runningExperiment(server(), key, environmentId, { key: 'sticky-size' });
      const assign = (unit_id: string) => server().request('POST', '/v1/assign', { key, body: { experiment_key: 'sticky-size', unit_id } });
      const units = ['first', 'second', 'third'];
      const firstAnswers = [];
      for (const unit of units) firstAnswers.push((await assign(unit)).body);
      const metrics = (await server().request('GET', '/metrics')).text;
      expect(metrics).toMatch(/^verdict_sticky_cache_entries 2$/m);
      expect(metrics).toMatch(/^verdict_sticky_cache_capacity_entries 2$/m);
      // The cache holds two: one unit was dropped (which one is the eviction's choice, CLOCK).
      // Its row stays, and is what answers it again.
      await pause(80);
      const misses = async () => {
        const counter = await server().ctx.metrics.registry.getSingleMetric('verdict_cache_requests_total')?.get();
        return counter?.values.find(({ labels }) => labels.cache === 'sticky_assignments' && labels.result === 'miss')?.value ?? 0;
      };
      const before = await misses();
      // The same answers, assignment ids included: a dropped unit was read back, not assigned anew.
      for (const [index, unit] of units.entries()) expect((await assign(unit)).body).toEqual(firstAnswers[index]);
      expect((await misses()) - before).toBeGreaterThanOrEqual(1);
      const rows = await server().ctx.db.selectFrom('assignments').select('unit_id').where('experiment_id', '=', experiment.id).execute();
      expect(rows.map((row) => row.unit_id).sort()).toEqual([...units].sort());
    });
  },
  { config: { assignmentCacheTtlMs: 20, stickyCacheSize: 2 } },
);
