import type { AppContext } from '../../context.js';
import type { Assigner } from '../assignment/assigner.js';

/** What the OFREP slice needs: the database (the running experiments' keys) and the assignment slice's Assigner. */
export interface OfrepDeps extends Pick<AppContext, 'db'> {
  assigner: Assigner;
}
