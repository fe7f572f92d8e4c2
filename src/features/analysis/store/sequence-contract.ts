/**
 * What a store computes for funnel and retention metrics (docs/metrics.md "Funnel metrics",
 * "Retention metrics"): per variant, how many units reached each step. Always from raw events,
 * in both computation modes: whether a unit completed step k depends on the time of its step
 * k - 1, which no per-unit sum of the rollups keeps, so the incremental computation rebuilds
 * these from the events at every snapshot (rebuilt, never approximated).
 */

/** A condition on a step event's properties: the value at the path `keys`. */
export interface SequenceCondition {
  keys: readonly string[];
  op: 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte';
  value: string | number | boolean;
}

export interface SequenceStepSpec {
  /** null: any event (retention without an event key). */
  event_key: string | null;
  where: SequenceCondition | null;
}

/**
 * funnel: a unit reaches step k when it has an event of step k after its step k - 1 (step 1:
 * at or after its exposure), all before exposed_at + window_ms (and the stop); the earliest such
 * event is its step's time. retention: a unit converts with an event of its one step in
 * [exposed_at + from_ms, exposed_at + window_ms), and counts only once that window has ended by
 * `asOf`.
 */
export interface SequenceSpec {
  kind: 'funnel' | 'retention';
  steps: readonly SequenceStepSpec[];
  window_ms: number;
  /** retention: where the window opens; 0 for a funnel. */
  from_ms: number;
}

export interface SequenceInput {
  workspaceId: string;
  experimentId: string;
  metrics: readonly SequenceSpec[];
  /** The stop: events at or after it count nowhere; null while running. */
  eventsBefore: number | null;
  /** Retention: units whose window ends after this (the snapshot's time, or the stop) are left out. */
  asOf: number;
}

/** One metric's counts in one variant. */
export interface SequenceCounts {
  /** The variant's live units. */
  units: number;
  /** The units analysed: every live unit for a funnel, those whose window has ended for retention. */
  eligible: number;
  /** Units that reached each step (one entry for retention). */
  steps: number[];
}

/** Per variant key, one entry per metric in the order given. */
export type SequenceTotals = Map<string, SequenceCounts[]>;
