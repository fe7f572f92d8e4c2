import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { SnapshotListener } from './read.js';
import { analysisRoutes } from './routes.js';

/** What the analysis slice needs: the database and its read pool, the statistics thread, the dialect seam, the clock and the snapshot timings. Other slices read it through read.ts. */
export type AnalysisDeps = Pick<AppContext, 'db' | 'seam' | 'reads' | 'stats' | 'clock' | 'metrics' | 'writes' | 'background'> & {
  /** Set when events live in ClickHouse: the computations run there (store-seam.ts). */
  clickhouse?: AppContext['clickhouse'];
  /** Told of each stored snapshot in the transaction that stores it (the alerts slice, given by the root). */
  onSnapshot?: SnapshotListener | undefined;
  /** Reweights a bandit whose update is due, before its snapshot is computed (the bandits slice, given by the root); true when it did. */
  reweightIfDue?: ((row: ExperimentRow) => Promise<boolean>) | undefined;
};

export interface AnalysisSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createAnalysis(deps: AnalysisDeps): AnalysisSlice {
  return { routes: analysisRoutes(deps) };
}
