import type { AppContext } from '../../context.js';
import type { ResultsReader } from '../analysis/results-reader.js';

/** Share links and exports read results through the analysis slice's reader (given by the root). */
export type SharingDeps = Pick<AppContext, 'db' | 'clock' | 'config'> & { results: ResultsReader };
