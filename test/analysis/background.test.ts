import { spawnSync } from 'node:child_process';
import { beforeAll, expect, it } from 'vitest';
import {
  ANALYSIS_COMPUTE_JOB,
  ANALYSIS_SCHEDULE_JOB,
  FINAL_SNAPSHOT_HORIZON_MS,
  cadenceJobKey,
  enqueueDueAnalyses,
  finalJobKey,
} from '../../src/features/analysis/jobs.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { runQueuedJobs } from '../support/jobs.js';
import type { TestServer } from '../support/server.js';
import { HOUR, MINUTE, ManualClock, createExperiment, exposeExactly } from './support.js';

const T0 = Date.UTC(2031, 9, 1, 9);
const clock = new ManualClock(T0);

async function snapshotsOf(server: TestServer, key: string, experimentId: string): Promise<any[]> {
  const history = await server.request('GET', `/v1/experiments/${experimentId}/results/history`, { key });
  expect(history.status).toBe(200);
  return history.body.snapshots;
}

describeEachDialect(
  'analysis in the background',
  (server, dialect) => {
    // The scheduler looks at every experiment of the database, so the tests share one workspace
    // and each makes the experiment it needs, out of the others' way: the cadence test's
    // experiment ends stopped with its final snapshot (never due again), the CLI test's stopped
    // before the scheduler's horizon (never a candidate).
    let key: string;
    let environmentId: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap('Background'));
    });

    it('registers the compute job and a scheduler that runs every minute', () => {
      expect(server().ctx.jobs.names).toContain(ANALYSIS_COMPUTE_JOB);
      expect(server().ctx.jobs.recurring).toContainEqual(expect.objectContaining({ name: ANALYSIS_SCHEDULE_JOB, everyMs: 60_000 }));
    });

    it('enqueues one compute per cadence period, however often the scheduler looks, and the worker runs it; computes one final snapshot after the experiment stops', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'hourly',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
        decision_rule: { snapshot_cadence_minutes: 60 },
      });
      await exposeExactly(server(), key, experiment, { a: 3, b: 2 }, 'h');

      clock.set(T0 + MINUTE);
      const first = await enqueueDueAnalyses(server().ctx);
      expect(first).toEqual([cadenceJobKey(experiment.id, T0 + MINUTE, HOUR)]);
      // A second scheduler (or the next tick) in the same period finds the job already there.
      expect(await enqueueDueAnalyses(server().ctx)).toEqual([]);
      await runQueuedJobs(server(), { concurrency: 2 });
      const [scheduled] = await snapshotsOf(server(), key, experiment.id);
      expect(scheduled).toMatchObject({ trigger: 'schedule', computed_at: new Date(T0 + MINUTE).toISOString(), computation: { mode: 'incremental' } });
      expect(scheduled.traffic.map((t: any) => t.exposed_units)).toEqual([3, 2]);

      clock.set(T0 + 30 * MINUTE);
      expect(await enqueueDueAnalyses(server().ctx)).toEqual([]);
      clock.set(T0 + 61 * MINUTE);
      expect(await enqueueDueAnalyses(server().ctx)).toEqual([cadenceJobKey(experiment.id, T0 + 61 * MINUTE, HOUR)]);
      await runQueuedJobs(server(), { concurrency: 2 });
      expect(await snapshotsOf(server(), key, experiment.id)).toHaveLength(2);

      // The same experiment, stopped: one final snapshot, then nothing more.
      clock.set(T0 + 70 * MINUTE);
      expect((await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'business' } })).status).toBe(200);
      clock.set(T0 + 71 * MINUTE);
      expect(await enqueueDueAnalyses(server().ctx)).toEqual([finalJobKey(experiment.id)]);
      await runQueuedJobs(server(), { concurrency: 2 });
      const snapshots = await snapshotsOf(server(), key, experiment.id);
      expect(snapshots.map((snapshot) => snapshot.trigger)).toEqual(['schedule', 'schedule', 'final']);
      clock.set(T0 + 3 * HOUR);
      expect(await enqueueDueAnalyses(server().ctx)).toEqual([]);
    });

    it('verdict analyze EXPERIMENT_ID computes, stores and prints a snapshot', async () => {
      // A stopped experiment, as the CLI usually meets one, stopped before the scheduler's horizon.
      const startedAt = T0 - FINAL_SNAPSHOT_HORIZON_MS - 2 * HOUR;
      clock.set(startedAt);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'stopped-long-ago',
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      });
      await exposeExactly(server(), key, experiment, { a: 3, b: 2 }, 'l');
      clock.set(startedAt + HOUR);
      expect((await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'business' } })).status).toBe(200);
      const config = server().ctx.config.database;
      const url = config.kind === 'postgres' ? config.url : `sqlite:${config.file}`;
      const env = { ...process.env, VERDICT_DATA_DIR: server().database.dataDir, VERDICT_DATABASE_URL: url, VERDICT_LOG_LEVEL: 'warn' };
      const result = spawnSync(process.execPath, ['bin/verdict.js', 'analyze', experiment.id], { env, encoding: 'utf8', timeout: 60_000 });
      expect(result.status, result.stderr).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(printed).toMatchObject({ experiment_id: experiment.id, trigger: 'cli', traffic: [{ exposed_units: 3 }, { exposed_units: 2 }] });
      expect((await snapshotsOf(server(), key, experiment.id)).at(-1)?.id).toBe(printed.id);
      const audit = await server().request('GET', `/v1/audit?target_id=${experiment.id}&action=experiment.results_computed`, { key });
      expect(audit.body.data[0]).toMatchObject({ actor_id: null, payload: { snapshot_id: printed.id, via: 'cli' } });
      // Without a flag the CLI computes as the cadence does: incrementally.
      expect(printed.computation).toMatchObject({ mode: 'incremental', units_refreshed: 5 });
      const run = (...flags: string[]) =>
        spawnSync(process.execPath, ['bin/verdict.js', 'analyze', experiment.id, ...flags], { env, encoding: 'utf8', timeout: 60_000 });
      // --rebuild drops the rollups and builds every unit again.
      const rebuilt = run('--rebuild');
      expect(JSON.parse(rebuilt.stdout).computation).toMatchObject({ mode: 'incremental', units_refreshed: 5 });
      if (dialect !== 'sqlite') return; // the failure paths do not depend on the database
      expect(run('--full', '--rebuild').stderr).toMatch(/choose one/);
      const missing = spawnSync(process.execPath, ['bin/verdict.js', 'analyze', '01J00000000000000000000000'], { env, encoding: 'utf8', timeout: 60_000 });
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toMatch(/no started experiment/);
      // Five CLI processes, each loading the whole program.
    }, 90_000);
  },
  { clock },
);
