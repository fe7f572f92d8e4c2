import { randomBase62 } from '../../lib/secrets.js';

// The workspace webhook secret signs task-tool callbacks: the task-tool slice reads it to verify
// a callback and rotates it, through this file only (the column is the workspaces slice's).
export { findWorkspaceSecret, lockWorkspaceSecret, replaceWorkspaceSecret } from './store.js';

/** A new webhook secret (a workspace's, or a webhook source's: the same format). */
export function newWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
}
