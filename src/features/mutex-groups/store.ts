import type { Executor } from '../../db/database.js';
import type { MutexGroupRow } from './read.js';

export async function insertMutexGroup(executor: Executor, row: MutexGroupRow): Promise<void> {
  await executor.insertInto('mutex_groups').values(row).execute();
}
