import type { AppContext } from '../../context.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { SnapshotListener } from './read.js';
import type { StoreView } from './store/contract.js';

/**
 * What the analysis slice needs: the database (definitions, snapshots), the analysis store
 * (store/contract.ts: where the sums come from), the statistics thread, the clock and the
 * snapshot timings. Other slices read it through read.ts.
 */
export type AnalysisDeps = Pick<AppContext, 'db' | 'analysisStore' | 'stats' | 'clock' | 'metrics'> & {
  /** Told of each stored snapshot in the transaction that stores it (the alerts slice, given by the root). */
  onSnapshot?: SnapshotListener | undefined;
  /** Reweights a bandit whose update is due, before its snapshot is computed (the bandits slice, given by the root); true when it did. */
  reweightIfDue?: ((row: ExperimentRow) => Promise<boolean>) | undefined;
};

/** A computation's dependencies with the store's view it reads through: every read of one snapshot sees the same events. */
export type ViewDeps = Pick<AnalysisDeps, 'db'> & { view: StoreView };
