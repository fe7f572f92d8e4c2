import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKeyRoutes } from './routes.js';
import type { ApiKeysDeps } from './deps.js';

export interface ApiKeysSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createApiKeys(deps: ApiKeysDeps): ApiKeysSlice {
  return { routes: apiKeyRoutes(deps) };
}
