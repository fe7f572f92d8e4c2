import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { mutexGroupRoutes } from './routes.js';

/** What the mutex-groups slice needs: the database, the dialect seam (unique keys) and the clock. Other slices read it through read.ts. */
export type MutexGroupsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

export interface MutexGroupsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createMutexGroups(deps: MutexGroupsDeps): MutexGroupsSlice {
  return { routes: mutexGroupRoutes(deps) };
}
