import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { apiKeyRoutes } from './routes.js';

/** The authenticator shows usage not yet written; a revocation is published on the change feed. */
export type ApiKeysDeps = Pick<AppContext, 'db' | 'clock' | 'changes' | 'authenticator'>;

export interface ApiKeysSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createApiKeys(deps: ApiKeysDeps): ApiKeysSlice {
  return { routes: apiKeyRoutes(deps) };
}
