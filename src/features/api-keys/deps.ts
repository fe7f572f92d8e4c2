import type { AppContext } from '../../context.js';

/** The authenticator shows usage not yet written; a revocation is published on the change feed. */
export type ApiKeysDeps = Pick<AppContext, 'db' | 'clock' | 'changes' | 'authenticator'>;
