import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/database.js';
import type { AutoStopRequest } from '../experiments/lifecycle.js';
import type { Experiment } from '../experiments/read.js';
import type { PublishEvent } from '../webhook-endpoints/index.js';

/**
 * Alerts and auto-stop: what to send when a snapshot is stored or an experiment starts or stops.
 * It sends through the webhook-endpoints slice's `publish` and stops through the experiments
 * slice's `stopAutomatically`, both given by the root; the analysis never learns of endpoints.
 */
export type AlertsDeps = Pick<AppContext, 'config' | 'clock'> & {
  publish: PublishEvent;
  stopAutomatically(trx: Tx, request: AutoStopRequest): Promise<{ experiment: Experiment; afterCommit: () => void } | null>;
};
