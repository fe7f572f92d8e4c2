// The differential check of assignment sources (issue #60 item 4): one workspace assigns the units
// itself and analyses the events it was sent; the units' exposures are then placed in an
// assignment table on a source (with rows the rule leaves out: a later exposure of some units to
// the other variant, another experiment's rows), and two analysis-only experiments read them
// there: one with the same metrics on a fact table holding the events, one (under another key,
// mapped by assignment_experiment_key) with the same metrics on the events sent to its own
// workspace. All three snapshots must agree: counts exactly, every other number to 1e-9.
import { expect } from 'vitest';
import { assignUnits, DAY, HOUR, sendEvents, type ManualClock } from '../analysis/support.js';
import type { Bootstrap, TestServer } from '../support/server.js';
import { eventsOf } from './differential-support.js';
import { defineExperiment, EXPERIMENT_KEY, T0, UNITS } from './snapshot-support.js';

export interface AssignmentRow {
  unit_id: string;
  experiment_key: string;
  variant_key: string;
  exposed_at: number;
}

export interface Placed {
  exposures: AssignmentRow[];
  events: Array<{ unit_id: string; event_key: string; occurred_at: number; amount: number | null }>;
}

export interface Side {
  boot: Bootstrap;
  experimentId: string;
}

export interface AssignedSeed {
  /** Assigned by Verdict, metrics on its events: the reference. */
  verdict: Side;
  /** Exposures from the assignment source, metrics on a fact table on the same source. */
  onFacts: Side & { assignmentSourceId: string };
  /** Exposures from the assignment source under another key, metrics on the events sent to Verdict. */
  onEvents: Side;
  /** Units whose later exposure to the other variant the source holds. */
  movedUnits: number;
}

export const ASSIGNMENTS_SQL = 'SELECT user_id, experiment, variant, seen_at FROM assignments';
const COLUMNS = { unit_id_column: 'user_id', experiment_key_column: 'experiment', variant_key_column: 'variant', timestamp_column: 'seen_at' };

/** The live exposures Verdict logged, with the rows the first-exposure rule must leave out. */
function assignmentRows(live: Array<{ unit_id: string; variant_key: string; exposed_at: number | string | bigint }>): AssignmentRow[] {
  const rows: AssignmentRow[] = live.map((row) => ({
    unit_id: row.unit_id,
    experiment_key: EXPERIMENT_KEY,
    variant_key: row.variant_key,
    exposed_at: Number(row.exposed_at),
  }));
  const moved = rows.filter((_, index) => index % 10 === 3);
  for (const row of moved) {
    rows.push({ ...row, variant_key: row.variant_key === 'control' ? 'treatment' : 'control', exposed_at: row.exposed_at + 2 * HOUR });
    rows.push({ ...row, exposed_at: row.exposed_at + 3 * HOUR });
  }
  for (let i = 0; i < 30; i += 1) rows.push({ unit_id: `other-${i}`, experiment_key: 'another-test', variant_key: 'treatment', exposed_at: T0 + i * HOUR });
  return rows;
}

async function post(server: TestServer, key: string, path: string, body: unknown): Promise<string> {
  const answer = await server.request('POST', path, { key, body });
  expect(answer.status, answer.text).toBe(201);
  return answer.body.id as string;
}

/** A data source on `url` and an assignment source over the assignments table in the workspace. */
async function assignmentSource(server: TestServer, boot: Bootstrap, kind: 'postgres' | 'clickhouse', url: string) {
  const dataSourceId = await post(server, boot.key, '/v1/data-sources', { name: 'Warehouse', kind, url });
  const id = await post(server, boot.key, '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'Assignments', sql: ASSIGNMENTS_SQL, ...COLUMNS });
  return { dataSourceId, id };
}

export async function seedAssigned(
  server: TestServer,
  clock: ManualClock,
  place: (placed: Placed) => Promise<string>,
  kind: 'postgres' | 'clickhouse',
): Promise<AssignedSeed> {
  clock.set(T0);
  const [verdictBoot, factsBoot, eventsBoot] = [await server.bootstrap('Verdict'), await server.bootstrap('Facts'), await server.bootstrap('Events')];
  const verdictExperiment = await defineExperiment(server, verdictBoot, null, true);
  await assignUnits(server, verdictBoot.key, EXPERIMENT_KEY, UNITS);
  clock.set(T0 + 15 * DAY);
  const events = UNITS.flatMap(eventsOf);
  await sendEvents(server, verdictBoot.key, events);
  await sendEvents(server, eventsBoot.key, events);
  const live = await server.ctx.db
    .selectFrom('exposures')
    .select(['unit_id', 'variant_key', 'exposed_at'])
    .where('experiment_id', '=', verdictExperiment)
    .where('superseded_at', 'is', null)
    .orderBy('unit_id')
    .execute();
  expect(live).toHaveLength(UNITS.length);
  const exposures = assignmentRows(live);
  const placedEvents = events.map((event) => {
    const amount = (event.properties as { amount?: unknown } | undefined)?.amount;
    return { unit_id: event.unit_id, event_key: event.event_key, occurred_at: event.occurred_at, amount: typeof amount === 'number' ? amount : null };
  });
  const url = await place({ exposures, events: placedEvents });
  const facts = await assignmentSource(server, factsBoot, kind, url);
  const factTableId = await post(server, factsBoot.key, '/v1/fact-tables', {
    data_source_id: facts.dataSourceId,
    name: 'Events',
    sql: 'SELECT unit_id, occurred_at, amount, event_key FROM events',
    unit_id_column: 'unit_id',
    timestamp_column: 'occurred_at',
  });
  const onEventsSource = await assignmentSource(server, eventsBoot, kind, url);
  // The analysis-only experiments start at T0 too, as the first did.
  clock.set(T0);
  const factsExperiment = await defineExperiment(server, factsBoot, factTableId, true, { assignment_source_id: facts.id });
  const eventsExperiment = await defineExperiment(server, eventsBoot, null, true, {
    key: 'assigned-elsewhere',
    assignment_source_id: onEventsSource.id,
    assignment_experiment_key: EXPERIMENT_KEY,
  });
  clock.set(T0 + 15 * DAY);
  return {
    verdict: { boot: verdictBoot, experimentId: verdictExperiment },
    onFacts: { boot: factsBoot, experimentId: factsExperiment, assignmentSourceId: facts.id },
    onEvents: { boot: eventsBoot, experimentId: eventsExperiment },
    movedUnits: live.filter((_, index) => index % 10 === 3).length,
  };
}
