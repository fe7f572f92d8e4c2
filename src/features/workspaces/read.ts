// What other slices may know of workspaces: the sessions slice shows the signed-in workspace.
export type { WorkspaceRow } from './store.js';
export { findWorkspace } from './store.js';
