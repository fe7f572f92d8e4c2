import { expect } from 'vitest';
import type { TestServer } from '../../support/server.js';
import { DAY, HOUR, sendEvents, type OutgoingEvent } from '../support.js';
import type { CaseStep, CaseWorld } from './harness.js';

/** A case's world that keeps its units, in the order they were first exposed. */
export interface UnitsWorld extends CaseWorld {
  units: string[];
}

/** Ends these units' assignments (a re-bucket): each is exposed anew at its next assignment. */
export async function unassign(server: TestServer, world: CaseWorld, units: readonly string[]): Promise<void> {
  for (const unit of units) {
    const removed = await server.request('DELETE', `/v1/assignments/${world.experiment.key}/${unit}`, { key: world.key });
    expect(removed.status, removed.text).toBe(204);
  }
}

/** Stops the experiment as inconclusive: events after it must not count. */
export async function stopExperiment(server: TestServer, world: CaseWorld): Promise<void> {
  const stopped = await server.request('POST', `/v1/experiments/${world.experiment.id}/stop`, { key: world.key, body: { reason: 'inconclusive' } });
  expect(stopped.status, stopped.text).toBe(200);
}

/** The names that stand for a server's own ids in comparisons: its experiment, workspace, environment, key and each metric by its role. */
export function idNames(
  minted: { experimentId: string; workspaceId: string; environmentId: string; keyId: string },
  metrics: Record<string, string>,
): Map<string, string> {
  return new Map<string, string>([
    [minted.experimentId, 'experiment'],
    [minted.workspaceId, 'workspace'],
    [minted.environmentId, 'environment'],
    [minted.keyId, 'api-key'],
    ...Object.entries(metrics).map(([name, id]): [string, string] => [id, `metric:${name}`]),
  ]);
}

type Assign<W> = (server: TestServer, world: W, unit: string) => Promise<void>;
type EventsFor<W> = (world: W, units: readonly string[], now: number) => OutgoingEvent[];

/**
 * The four steps most cases play: 40 units exposed then their events; a day later 10 more, with
 * late events (nine days old) of the first 8; a re-bucket of 5 units, 3 of them assigned again,
 * and events of the first 12; a stop, then events after it.
 */
export function standardSteps<W extends UnitsWorld>(assign: Assign<W>, eventsFor: EventsFor<W>, what = 'events'): ReadonlyArray<CaseStep<W>> {
  return [
    {
      name: `first exposures and ${what}`,
      async run(server, world, clock) {
        for (let i = 0; i < 40; i += 1) world.units.push(`unit-${i}`);
        for (const unit of world.units) await assign(server, world, unit);
        clock.advance(HOUR);
        await sendEvents(server, world.key, eventsFor(world, world.units, clock.now()));
      },
    },
    {
      name: `more units and ${what}, some late`,
      async run(server, world, clock) {
        clock.advance(DAY);
        const fresh = Array.from({ length: 10 }, (_, i) => `unit-${40 + i}`);
        for (const unit of fresh) await assign(server, world, unit);
        world.units.push(...fresh);
        const late = eventsFor(world, world.units.slice(0, 8), clock.now() - 9 * DAY);
        await sendEvents(server, world.key, [...eventsFor(world, world.units, clock.now()), ...late]);
      },
    },
    {
      name: 'a re-bucket and re-assignments',
      async run(server, world, clock) {
        clock.advance(HOUR);
        await unassign(server, world, world.units.slice(0, 5));
        clock.advance(HOUR);
        for (const unit of world.units.slice(0, 3)) await assign(server, world, unit);
        await sendEvents(server, world.key, eventsFor(world, world.units.slice(0, 12), clock.now()));
      },
    },
    {
      name: `a stop, then ${what} after it`,
      async run(server, world, clock) {
        clock.advance(HOUR);
        await stopExperiment(server, world);
        clock.advance(HOUR);
        await sendEvents(server, world.key, eventsFor(world, world.units, clock.now()));
      },
    },
  ];
}
