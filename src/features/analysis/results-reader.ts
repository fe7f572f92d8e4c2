import type { AnalysisDeps } from './deps.js';
import type { AnalysisSnapshot, HistoryQuery } from './schemas.js';
import { latestResults, resultsHistory } from './service.js';

/**
 * What other slices (sharing: share links and exports) may read of an experiment's results. A read
 * here is not a peek through the admin UI: the caller audits it as what it is (a share link's view,
 * an export).
 */
export interface ResultsReader {
  /** The latest snapshot; 404 problems as GET /v1/experiments/{id}/results. */
  latest(workspaceId: string, experimentId: string): Promise<AnalysisSnapshot>;
  /** One page of the history, oldest first. */
  history(
    workspaceId: string,
    experimentId: string,
    query: Omit<HistoryQuery, 'fields'>,
  ): Promise<{ snapshots: AnalysisSnapshot[]; next_cursor: string | null }>;
}

export function resultsReader(ctx: AnalysisDeps): ResultsReader {
  return {
    latest: (workspaceId, experimentId) => latestResults(ctx, { workspaceId, keyId: '', environmentId: null, kind: 'server', via: 'bearer' }, experimentId),
    // Full snapshots only (no `fields: summary`), so the type is the whole snapshot.
    history: async (workspaceId, experimentId, query) =>
      (await resultsHistory(ctx, workspaceId, experimentId, query)) as { snapshots: AnalysisSnapshot[]; next_cursor: string | null },
  };
}
