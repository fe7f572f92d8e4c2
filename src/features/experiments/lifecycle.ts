import type { Executor } from '../../db/database.js';
import type { Experiment } from './schemas.js';

/** Who stopped an experiment: an API key, a person in the admin UI, or an auto-stop condition. */
export type StoppedBy = 'key' | 'person' | 'auto';

/** A lifecycle move, told to a listener (the alerts slice) in the transaction that makes it. */
export type LifecycleEvent =
  | { kind: 'started'; experiment: Experiment; actorId: string }
  | { kind: 'stopped'; experiment: Experiment; actorId: string | null; stoppedBy: StoppedBy; snapshotId: string | null };

export type LifecycleListener = (executor: Executor, event: LifecycleEvent) => Promise<void>;

export type AutoStopCondition = 'recommendation' | 'guardrail_regression' | 'srm';

export interface AutoStopRequest {
  workspaceId: string;
  experimentId: string;
  reason: 'won' | 'lost' | 'inconclusive' | 'bug';
  condition: AutoStopCondition;
  snapshotId: string;
  /** Recorded as the stop's outcome_notes: what the snapshot found. */
  notes: string;
}
