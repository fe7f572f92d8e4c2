import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../../support/clock.js';
import type { TestServer } from '../../support/server.js';
import { computeIn, expectSameAnalysis } from '../incremental-support.js';
import { reachableStores, serversPerStore } from './stores.js';

/**
 * The conformance harness of the analysis stores (docs/architecture.md "The analysis store
 * seam"): a case is a script of seeded data sent through the HTTP API; the harness plays it on one
 * server per store (SQLite, PostgreSQL, ClickHouse), computes a snapshot in both modes (incremental,
 * then full) after every step, and requires every snapshot of a step to equal the SQLite full
 * computation's: counts exactly, other numbers within 1e-9 relative. A new metric kind, or
 * anything else a store computes, joins by adding a case (cases.ts).
 */

/** What a case's set-up returns: the workspace's key, the experiment, and the ids to name rather than compare. */
export interface CaseWorld {
  key: string;
  experiment: { id: string; key: string; variants: Array<{ key: string; weight: number }> };
  /** Ids this server minted (experiment, metrics, API key ...) and the names that stand for them in comparisons. */
  names: Map<string, string>;
}

export interface CaseStep<W extends CaseWorld> {
  name: string;
  run(server: TestServer, world: W, clock: ManualClock): Promise<void>;
}

export interface ConformanceCase<W extends CaseWorld = CaseWorld> {
  name: string;
  /** Creates the workspace, metrics and experiment on a fresh clock (the harness sets it to the case's start). */
  setUp(server: TestServer, clock: ManualClock): Promise<W>;
  /** Each step changes the data; snapshots in both modes follow each. */
  steps: ReadonlyArray<CaseStep<W>>;
  /** The clock at the start of the case, the same on every store. */
  start: number;
  /** Asserts the reference snapshots (SQLite, full, one per step) show what the case is meant to exercise: agreement over nothing proves nothing. */
  covers(snapshots: readonly any[]): void;
}

type Mode = 'incremental' | 'full';
type Played = Array<{ step: string; snapshots: Record<Mode, any> }>;

/** The snapshot with this server's ids replaced by their names. */
function named(snapshot: any, names: Map<string, string>): any {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return names.get(value) ?? value;
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, walk(inner)]));
    return value;
  };
  return walk(snapshot);
}

/** Plays a case on one server: the snapshots in both modes after every step. */
export async function play<W extends CaseWorld>(server: TestServer, clock: ManualClock, testCase: ConformanceCase<W>): Promise<Played> {
  clock.set(testCase.start);
  const world = await testCase.setUp(server, clock);
  const played: Played = [];
  for (const step of testCase.steps) {
    await step.run(server, world, clock);
    const incremental = await computeIn(server, world.key, world.experiment.id, 'incremental');
    const full = await computeIn(server, world.key, world.experiment.id, 'full');
    played.push({ step: step.name, snapshots: { incremental: named(incremental, world.names), full: named(full, world.names) } });
  }
  return played;
}

/** Every snapshot of `played` equals the reference's full computation of the same step. */
function expectAgreement(store: string, played: Played, reference: Played, caseName: string): void {
  expect(played.map((entry) => entry.step)).toEqual(reference.map((entry) => entry.step));
  played.forEach((entry, index) => {
    for (const mode of ['incremental', 'full'] as const) {
      expect(entry.snapshots[mode].computation.store).toBe(store);
      expectSameAnalysis(entry.snapshots[mode], reference[index]!.snapshots.full, `${caseName}, ${entry.step}: ${store} ${mode} vs sqlite full`);
    }
  });
}

/** A case played on one store: seconds on an idle machine, several times that beside other test runs. */
const PLAY_TIMEOUT_MS = 240_000;

/**
 * Registers, per case, one test per reachable store: SQLite's first (the reference, its
 * incremental snapshots equal to its full ones), then each other store's against it.
 */
export function describeConformance(name: string, clock: ManualClock, cases: readonly ConformanceCase<any>[]): void {
  describe(name, () => {
    const servers = serversPerStore(clock);
    for (const testCase of cases) {
      let reference: Played | null = null;
      for (const store of reachableStores()) {
        it(
          `${testCase.name} [${store.name}]`,
          async () => {
            const played = await play(servers().get(store.name)!, clock, testCase);
            if (store.name === 'sqlite') {
              testCase.covers(played.map((entry) => entry.snapshots.full));
              reference = played;
            }
            expect(reference, 'the SQLite reference was played first').not.toBeNull();
            expectAgreement(store.name, played, reference!, testCase.name);
          },
          PLAY_TIMEOUT_MS,
        );
      }
    }
  });
}
