/**
 * Chooses where drained events are kept, once at start-up (as createAnalysisStore chooses the
 * analysis store): ClickHouse's events table when VERDICT_CLICKHOUSE_URL gave a client, else the
 * primary database's.
 */
import type { EventStorage } from '../../buffer/types.js';
import type { ClickHouse } from '../../clickhouse/client.js';
import { clickHouseOutsideStore, persistToClickHouse } from '../../clickhouse/events.js';
import type { Executor } from '../../db/database.js';
import { insertEvents } from './store.js';

export function createEventStorage(db: Executor, clickhouse: ClickHouse | null): EventStorage {
  if (!clickhouse) return { persist: insertEvents, outside: null };
  return { persist: persistToClickHouse(clickhouse), outside: clickHouseOutsideStore(clickhouse, db) };
}
