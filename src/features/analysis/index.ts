import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { analysisRoutes } from './routes.js';

/** What the analysis slice needs: the database and its read pool, the dialect seam, the clock and the snapshot timings. Other slices read it through read.ts. */
export type AnalysisDeps = Pick<AppContext, 'db' | 'seam' | 'reads' | 'clock' | 'metrics'>;

export interface AnalysisSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createAnalysis(deps: AnalysisDeps): AnalysisSlice {
  return { routes: analysisRoutes(deps) };
}
