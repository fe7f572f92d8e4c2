import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { segmentRoutes } from './routes.js';
import type { SegmentsDeps } from './deps.js';

export interface SegmentsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createSegments(deps: SegmentsDeps): SegmentsSlice {
  return { routes: segmentRoutes(deps) };
}
