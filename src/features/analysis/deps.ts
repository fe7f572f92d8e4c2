import type { AppContext } from '../../context.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { SnapshotListener } from './read.js';
import type { StatsRunner } from './compute/thread/stats-thread.js';
import type { AnalysisStore, StoreView } from './store/contract.js';

declare module '../../context.js' {
  /** The analysis's services, built by the composition root (app/context.ts). */
  interface AppContext {
    /** Where a snapshot's statistics run: the process's statistics thread, or this thread when analysis threads are off. */
    stats: StatsRunner;
    /** Where a snapshot's sums come from: the primary database's SQL, or ClickHouse (store/). */
    analysisStore: AnalysisStore;
  }
}

/**
 * What the analysis slice needs: the database (definitions, snapshots), the analysis store
 * (store/contract.ts: where the sums come from), the statistics thread, the clock and the
 * snapshot timings; the secret box and config to open the sources of metrics on fact tables. Other slices read it through read.ts.
 */
export type AnalysisDeps = Pick<AppContext, 'db' | 'analysisStore' | 'stats' | 'clock' | 'metrics' | 'secrets' | 'config'> & {
  /** Told of each stored snapshot in the transaction that stores it (the alerts slice, given by the root). */
  onSnapshot?: SnapshotListener | undefined;
  /** Reweights a bandit whose update is due, before its snapshot is computed (the bandits slice, given by the root); true when it did. */
  reweightIfDue?: ((row: ExperimentRow) => Promise<boolean>) | undefined;
};

/** A computation's dependencies with the store's view it reads through: every read of one snapshot sees the same events. */
export type ViewDeps = Pick<AnalysisDeps, 'db'> & { view: StoreView };
