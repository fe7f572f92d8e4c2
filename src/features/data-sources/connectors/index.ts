import type { DataSourceKind } from '../../../db/tables/warehouse.js';
import { openClickHouseSource } from './clickhouse.js';
import type { SourceSession } from './errors.js';
import { openPostgres, type SessionLimits } from './postgres.js';

export { SourceError, type DescribedColumn, type QueryParams, type SourceSession } from './errors.js';
export type { SessionLimits } from './postgres.js';

/** Opens a session on the source, runs `work` and closes it, whatever happens. */
export async function withSource<T>(kind: DataSourceKind, url: string, limits: SessionLimits, work: (session: SourceSession) => Promise<T>): Promise<T> {
  const session = kind === 'postgres' ? await openPostgres(url, limits) : await openClickHouseSource(url, limits);
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}
