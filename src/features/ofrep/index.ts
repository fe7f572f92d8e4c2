import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { Assigner } from '../assignment/assigner.js';
import { ofrepRoutes } from './routes.js';

/** What the OFREP slice needs: the database (the running experiments' keys) and the assignment slice's Assigner. */
export interface OfrepDeps extends Pick<AppContext, 'db'> {
  assigner: Assigner;
}

export interface OfrepSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createOfrep(deps: OfrepDeps): OfrepSlice {
  return { routes: ofrepRoutes(deps) };
}
