import type { AppContext } from '../../../context.js';

/** What the SQL store needs: the database and its read pool, the dialect, where its long writes run and take turns, and the clock. */
export type SqlStoreDeps = Pick<AppContext, 'db' | 'seam' | 'reads' | 'writes' | 'background' | 'clock'>;
