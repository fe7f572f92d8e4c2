import type { AppContext } from '../../context.js';

/** What the planning slice needs: the database (definitions), the analysis store (history) and the clock. */
export type PlanningDeps = Pick<AppContext, 'db' | 'analysisStore' | 'clock'>;
