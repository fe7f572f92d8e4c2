import type { AppContext } from '../../context.js';

/** Sources and fact tables: the database for their rows and audit, the secret box for the URLs, the config for the network rule and limits. */
export type DataSourcesDeps = Pick<AppContext, 'config' | 'db' | 'seam' | 'clock' | 'secrets' | 'logger'>;
