/**
 * The people slice's read model: what other slices may know of a person of a workspace (the
 * experiments slice names an experiment's owner). Other slices import this file, never store.ts.
 */
import type { Executor } from '../../db/database.js';
import { findUser } from './store.js';

export interface PersonRef {
  id: string;
  /** The name, or the email when the person has not given one. */
  name: string;
}

/** A person of the workspace by id (disabled ones too: they may still own past work); undefined when none. */
export async function findPerson(executor: Executor, workspaceId: string, id: string): Promise<PersonRef | undefined> {
  const row = await findUser(executor, workspaceId, id);
  return row ? { id: row.id, name: row.name ?? row.email } : undefined;
}
