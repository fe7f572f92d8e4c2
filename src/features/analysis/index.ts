import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AnalysisDeps } from './deps.js';
import { analysisRoutes } from './routes.js';
import { resultsReader, type ResultsReader } from './results-reader.js';

export type { AnalysisDeps } from './deps.js';

export interface AnalysisSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Results for other slices (share links, exports), without the admin UI's peek audit. */
  results: ResultsReader;
}

export function createAnalysis(deps: AnalysisDeps): AnalysisSlice {
  return { routes: analysisRoutes(deps), results: resultsReader(deps) };
}
