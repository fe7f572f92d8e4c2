/**
 * The snapshot's statistics, by name, for the statistics thread (stats-thread.ts) or the caller's
 * own thread. Pure: a task's answer depends on its input alone, wherever it runs.
 */
import { buildBreakdowns, type BreakdownBuildInput } from '../breakdowns.js';
import { buildSnapshot, type BuildInput } from '../build.js';

export const statsTasks = {
  snapshot: (input: BuildInput) => buildSnapshot(input),
  breakdowns: (input: BreakdownBuildInput) => buildBreakdowns(input),
  /** Answers once the thread has loaded the tasks' modules: a benchmark starts its clock after it. */
  ready: () => true,
};

export type StatsTasks = typeof statsTasks;
export type StatsTaskName = keyof StatsTasks;
export type StatsInput<K extends StatsTaskName> = Parameters<StatsTasks[K]>[0];
export type StatsOutput<K extends StatsTaskName> = Awaited<ReturnType<StatsTasks[K]>>;

export function isStatsTask(name: unknown): name is StatsTaskName {
  return typeof name === 'string' && Object.hasOwn(statsTasks, name);
}

export async function runStatsTask<K extends StatsTaskName>(name: K, input: StatsInput<K>): Promise<StatsOutput<K>> {
  const task = statsTasks[name] as (input: StatsInput<K>) => StatsOutput<K> | Promise<StatsOutput<K>>;
  return task(input);
}
