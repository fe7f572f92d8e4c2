import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { ThreadBufferWriter } from '../../src/buffer/thread-writer.js';
import { computeById } from '../../src/features/analysis/service.js';
import { insertEvents } from '../../src/features/events/store.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import {
  drainedPurchase,
  expectConcurrentRefreshesCountOnce,
  refreshDyingBeforeCommit,
  smallExperiment,
  type SmallExperiment,
} from './conformance/small-experiment.js';
import { computeIn, expectSameAnalysis } from './incremental-support.js';
import { HOUR, ManualClock, sendEvents, type OutgoingEvent } from './support.js';

/**
 * The faults of incremental analysis (docs/analysis.md "Incremental analysis"): drain
 * transactions committing in the opposite order of their ids, a refresh that dies before it
 * commits, and refreshes of one experiment running at once.
 */
const T0 = Date.UTC(2033, 5, 1, 12);
const clock = new ManualClock(T0);

/** The small experiment, its first incremental snapshot computed. */
async function setUp(server: TestServer, name: string): Promise<SmallExperiment> {
  const setup = await smallExperiment(server, clock, T0, name);
  await computeIn(server, setup.key, setup.experiment.id, 'incremental');
  return setup;
}

const drained = (setup: SmallExperiment, unit: string, amount: number) => drainedPurchase(setup, clock, unit, amount);

/** The experiment's rollup rows and state, to compare before and after. */
async function rollupsOf(server: TestServer, experimentId: string) {
  const db = server.ctx.db;
  const values = await db
    .selectFrom('analysis_rollup_values')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('unit_id')
    .orderBy('metric_id')
    .execute();
  const units = await db.selectFrom('analysis_rollup_units').selectAll().where('experiment_id', '=', experimentId).orderBy('unit_id').execute();
  const state = await db.selectFrom('analysis_rollup_state').selectAll().where('experiment_id', '=', experimentId).executeTakeFirst();
  return { values, units, state };
}

describeEachDialect(
  'incremental analysis under faults',
  (server, dialect) => {
    it('counts two drained transactions exactly once when they commit in the opposite order of their ids', async () => {
      const setup = await setUp(server(), 'out-of-order');
      clock.advance(HOUR);
      const early = drained(setup, setup.units[0]!, 10);
      const later = drained(setup, setup.units[1]!, 20);
      expect(early.id < later.id).toBe(true);
      let release: () => void = () => undefined;
      if (dialect === 'postgres') {
        // The early event's drain transaction starts first (so it also has the smaller
        // transaction id) and stays open while the later one commits and a refresh runs.
        let inserted: () => void = () => undefined;
        const insertedEarly = new Promise<void>((resolve) => (inserted = resolve));
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = server()
          .ctx.db.transaction()
          .execute(async (trx) => {
            await insertEvents(trx, [early]);
            inserted();
            await held;
          });
        await insertedEarly;
        await server()
          .ctx.db.transaction()
          .execute((trx) => insertEvents(trx, [later]));
        const middle = await computeIn(server(), setup.key, setup.experiment.id, 'incremental');
        expect(middle.computation.events_read).toBe(1);
        expectSameAnalysis(middle, await computeIn(server(), setup.key, setup.experiment.id, 'full'), 'with only the later commit');
        release();
        await first;
        const xids = await sql<{
          id: string;
          xid: string;
        }>`SELECT id, drain_xid::text AS xid FROM events WHERE id IN (${early.id}, ${later.id}) ORDER BY id`.execute(server().ctx.db);
        expect(BigInt(xids.rows[0]!.xid) < BigInt(xids.rows[1]!.xid)).toBe(true);
      } else {
        // One writer at a time: the event with the smaller id is simply stored after the other.
        await server()
          .ctx.db.transaction()
          .execute((trx) => insertEvents(trx, [later]));
        const middle = await computeIn(server(), setup.key, setup.experiment.id, 'incremental');
        expect(middle.computation.events_read).toBe(1);
        await server()
          .ctx.db.transaction()
          .execute((trx) => insertEvents(trx, [early]));
      }
      const last = await computeIn(server(), setup.key, setup.experiment.id, 'incremental');
      expect(last.computation.events_read).toBe(1);
      const full = await computeIn(server(), setup.key, setup.experiment.id, 'full');
      expectSameAnalysis(last, full, 'after both commits');
      // 20 first events, then one each for units 0 and 1.
      expect(last.per_variant.reduce((total: number, variant: any) => total + variant.observed_rate * variant.sample_size, 0)).toBeCloseTo(22, 9);
    });

    it('leaves the rollups as they were when a refresh dies before it commits, and the next refresh is exact', async () => {
      const setup = await setUp(server(), 'interrupted');
      const before = await rollupsOf(server(), setup.experiment.id);
      clock.advance(HOUR);
      await sendEvents(server(), setup.key, [{ event_key: 'buy', unit_id: setup.units[2]!, occurred_at: clock.now(), properties: { amount: 7 } }]);
      expect((await server().request('DELETE', `/v1/assignments/${setup.experiment.key}/${setup.units[3]}`, { key: setup.key })).status).toBe(204);
      // On PostgreSQL the same transaction also rebuilds every unit's rows of a new lookback; on
      // SQLite that rebuild goes in steps first (the next test), and the transaction holds the rest.
      if (dialect === 'postgres') {
        const patched = await server().request('PATCH', `/v1/experiments/${setup.experiment.id}`, {
          key: setup.key,
          body: { variance_reduction: { method: 'cuped', lookback_days: 3 } },
        });
        expect(patched.status).toBe(200);
      }
      await refreshDyingBeforeCommit(server(), setup.experiment.id);
      expect(await rollupsOf(server(), setup.experiment.id)).toEqual(before);
      const next = await computeIn(server(), setup.key, setup.experiment.id, 'incremental');
      expectSameAnalysis(next, await computeIn(server(), setup.key, setup.experiment.id, 'full'), 'after the interrupted refresh');
    });

    it('resumes a build in steps where it stopped, and two builds at once count every unit once', async () => {
      // PostgreSQL builds in the refresh's one transaction (the test above); SQLite in steps.
      if (dialect !== 'sqlite') return;
      const setup = await setUp(server(), 'stepped');
      clock.advance(HOUR);
      await sendEvents(server(), setup.key, [{ event_key: 'buy', unit_id: setup.units[4]!, occurred_at: clock.now(), properties: { amount: 3 } }]);
      let steps = 0;
      const dying = computeById(server().ctx, setup.experiment.id, {
        trigger: 'api',
        mode: 'incremental',
        rebuild: true,
        refresh: {
          stepUnits: 3,
          afterStep: async () => {
            steps += 1;
            // Stops after the old rows are gone and a few units are built.
            if (steps === 6) throw new Error('the process died here');
          },
        },
      });
      await expect(dying).rejects.toThrow('the process died here');
      const state = await server().ctx.db.selectFrom('analysis_rollup_state').selectAll().where('experiment_id', '=', setup.experiment.id).executeTakeFirst();
      expect(JSON.parse(state?.progress ?? 'null')).toMatchObject({ clearing: false });
      // More arrive while the build is interrupted: the build counts them up to its watermark, the refresh after it the rest.
      await sendEvents(server(), setup.key, [{ event_key: 'buy', unit_id: setup.units[15]!, occurred_at: clock.now(), properties: { amount: 4 } }]);
      const both = await Promise.all(
        [1, 2].map(() => computeById(server().ctx, setup.experiment.id, { trigger: 'api', mode: 'incremental', refresh: { stepUnits: 3 } })),
      );
      const full = await computeIn(server(), setup.key, setup.experiment.id, 'full');
      both.forEach((snapshot, index) => expectSameAnalysis(snapshot, full, `resumed build ${index}`));
      expect(both[0]!.traffic.reduce((total: number, variant: any) => total + variant.exposed_units, 0)).toBe(20);
    });

    it('runs the steps of a build and the refresh as write tasks, on the writer thread of a SQLite file', async () => {
      if (dialect !== 'sqlite') return;
      const setup = await setUp(server(), 'on-thread');
      const writes = server().ctx.writes;
      // The writer thread, so the API's event loop runs none of the build's statements.
      expect(writes).toBeInstanceOf(ThreadBufferWriter);
      const ran: string[] = [];
      const run = writes.run.bind(writes);
      // Each goes through the process's background turns (db/background-writes.ts): one at a time, resting between.
      const background = server().ctx.background;
      const inTurn = background.run.bind(background);
      let turns = 0;
      writes.run = (task, input) => {
        ran.push(task.writerTask);
        return run(task, input);
      };
      background.run = (piece) => {
        turns += 1;
        return inTurn(piece);
      };
      try {
        const rebuilt = await computeById(server().ctx, setup.experiment.id, { trigger: 'api', mode: 'incremental', rebuild: true, refresh: { stepUnits: 4 } });
        expectSameAnalysis(rebuilt, await computeIn(server(), setup.key, setup.experiment.id, 'full'), 'rebuilt on the writer thread');
      } finally {
        writes.run = run;
        background.run = inTurn;
      }
      // Clearing the old rows, then 20 units in steps of 4 (the last finds none left), then the refresh.
      expect(ran.filter((name) => name === 'analysis.build-step').length).toBeGreaterThanOrEqual(6);
      expect(ran.at(-1)).toBe('analysis.refresh');
      expect(turns).toBe(ran.filter((name) => name === 'analysis.build-step' || name === 'analysis.refresh').length);
    });

    it('refreshes many new events in rounds, each its own transaction, up to the events there were when it began, counting each once', async () => {
      if (dialect !== 'sqlite') return;
      const setup = await setUp(server(), 'rounds');
      clock.advance(HOUR);
      const burst = (count: number, amount: number) =>
        Array.from({ length: count }, (_, i): OutgoingEvent => ({
          event_key: 'buy',
          unit_id: setup.units[i % setup.units.length]!,
          occurred_at: clock.now() - i,
          properties: { amount: amount + i },
        }));
      await sendEvents(server(), setup.key, burst(23, 1));
      // A re-assigned unit: its rows are built again from all its events in the first round.
      expect((await server().request('DELETE', `/v1/assignments/${setup.experiment.key}/${setup.units[5]}`, { key: setup.key })).status).toBe(204);
      const writes = server().ctx.writes;
      const run = writes.run.bind(writes);
      let rounds = 0;
      writes.run = async (task, input) => {
        const result = await run(task, input);
        if (task.writerTask !== 'analysis.refresh') return result;
        rounds += 1;
        // Between the second and the third round, more events and another re-assignment arrive.
        if (rounds === 2) {
          await sendEvents(server(), setup.key, burst(6, 100));
          expect((await server().request('DELETE', `/v1/assignments/${setup.experiment.key}/${setup.units[12]}`, { key: setup.key })).status).toBe(204);
        }
        return result;
      };
      const refresh = () => computeById(server().ctx, setup.experiment.id, { trigger: 'api', mode: 'incremental', refresh: { roundEvents: 4 } });
      let byRounds: any;
      try {
        await refresh();
        // The 23 events there were when it began, in rounds of 4: the 6 that came later are left
        // for the next refresh, however many rounds it takes, so a refresh always ends.
        expect(rounds).toBe(6);
        byRounds = await refresh();
        expect(rounds).toBe(8);
      } finally {
        writes.run = run;
      }
      expectSameAnalysis(byRounds, await computeIn(server(), setup.key, setup.experiment.id, 'full'), 'refreshed in rounds');
      const idle = await computeIn(server(), setup.key, setup.experiment.id, 'incremental');
      expect(idle.computation).toMatchObject({ events_read: 0, units_refreshed: 0 });
    });

    it('never double-counts when refreshes of one experiment run at once', async () => {
      await expectConcurrentRefreshesCountOnce(server(), clock, await smallExperiment(server(), clock, T0, 'concurrent'));
    });
  },
  { clock },
);
