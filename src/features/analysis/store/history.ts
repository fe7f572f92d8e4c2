/**
 * The history a plan reads (docs/statistics.md "9a. Planning an experiment"): a metric's per-unit
 * sums over the units seen in a past period of an environment, as if each had entered an
 * experiment when it was first seen. Every store computes them with its own per-unit values (the
 * same definitions as a snapshot's), so a baseline from history is the metric as the analysis
 * will measure it.
 */
import type { MetricSpec, MetricTotals } from './contract.js';

export interface HistoryInput {
  workspaceId: string;
  environmentId: string;
  /** The period [from, to): units first seen in it, and their events before `to`. */
  from: number;
  to: number;
  /** The metrics, each with its cap resolved (a percentile cap is not applied to history) and its CUPED lookback if any. */
  metrics: readonly MetricSpec[];
}

/**
 * A unit is seen when it has an exposure to an experiment of the environment, or an event of the
 * workspace (events carry no environment), in the period; its values count from the first time
 * it is seen, as a snapshot's count from the exposure.
 */
export interface HistoryTotals {
  /** Distinct units seen in the period. */
  units: number;
  /** Per metric, in the order given: the totals over the units seen, as a snapshot's per variant. */
  metrics: MetricTotals[];
  /** Per metric: the events counted in its values (a ratio's numerator and denominator events). */
  events: number[];
}
