import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AnalysisDeps } from './deps.js';
import { analysisRoutes } from './routes.js';

export type { AnalysisDeps } from './deps.js';

export interface AnalysisSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createAnalysis(deps: AnalysisDeps): AnalysisSlice {
  return { routes: analysisRoutes(deps) };
}
