// What other slices may know of the analysis: the snapshot's shape, and the listener the analysis
// tells of each stored snapshot (the alerts slice), in the transaction that stores it.
import type { Executor } from '../../db/database.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { AnalysisSnapshot } from './schemas.js';

export type { AnalysisSnapshot, RecommendationAction, VariantPosterior } from './schemas.js';
export { plannedSamplePerVariant } from './compute/recommendation.js';

/**
 * Called in the transaction that inserts a snapshot; whatever it writes commits with the snapshot
 * or not at all. It may return work to do once the transaction has committed.
 */
export type SnapshotListener = (executor: Executor, stored: { experiment: ExperimentRow; snapshot: AnalysisSnapshot }) => Promise<(() => void) | void>;

/** Called in the transaction that marks an analysis job failed for good. */
export type AnalysisFailureListener = (executor: Executor, failed: { experimentId: string; reason: string }) => Promise<void>;
