import type { AppContext } from '../../context.js';

// Other slices write their entries through recorder.ts (in their own transaction); this slice
// only lists them.
export type AuditDeps = Pick<AppContext, 'db'>;
