import type { AppContext } from '../../context.js';

/** Liveness, and readiness asks the database and the event buffer. */
export type HealthDeps = Pick<AppContext, 'config' | 'db' | 'buffer'>;
