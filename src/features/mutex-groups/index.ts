import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { mutexGroupRoutes } from './routes.js';
import type { MutexGroupsDeps } from './deps.js';

export interface MutexGroupsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createMutexGroups(deps: MutexGroupsDeps): MutexGroupsSlice {
  return { routes: mutexGroupRoutes(deps) };
}
