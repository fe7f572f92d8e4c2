import { findWorkspace } from '../workspaces/read.js';
import { baseUrlOf } from './links.js';
import type { Role } from './roles.js';
import type { PeopleDeps } from './deps.js';
import { inviteUser } from './users.js';

/** `verdict users invite`: the same invitation as POST /v1/users, made by the system (no actor). */
export async function inviteFromCommandLine(ctx: PeopleDeps, workspaceId: string, email: string, role: Role) {
  if (!(await findWorkspace(ctx.db, workspaceId))) throw new Error(`workspace ${workspaceId} does not exist`);
  if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) throw new Error(`--email must be an email address, got "${email}"`);
  return inviteUser(ctx, workspaceId, null, { email, role }, baseUrlOf(ctx.config.publicUrl, `http://localhost:${ctx.config.port}`));
}
