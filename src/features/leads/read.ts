// What other slices may know of leads. The task-tool slice finds the lead linked to a task
// here; the two changes it may make to that lead are in task-link.ts.
export type { LeadRow } from './store.js';
export { lockLeadByTask } from './store.js';
