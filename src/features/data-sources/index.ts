import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DataSourcesDeps } from './deps.js';
import { warehouseRoutes } from './routes.js';

export interface DataSourcesSlice {
  routes: FastifyPluginAsyncTypebox;
}

/** Warehouse sources (docs/warehouse.md): data sources and the fact tables defined over them. */
export function createDataSources(deps: DataSourcesDeps): DataSourcesSlice {
  return { routes: warehouseRoutes(deps) };
}
