import type { SqlStoreDeps } from '../sql/deps.js';

/** What the ClickHouse store needs of the primary database: the exposures it mirrors, the committed drain number, the clock. */
export type ClickHouseStoreDeps = Pick<SqlStoreDeps, 'db' | 'seam' | 'clock'>;
