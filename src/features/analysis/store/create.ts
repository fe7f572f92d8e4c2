/**
 * Chooses the analysis store once, at start-up, as createEventBuffer chooses a buffer: ClickHouse
 * when VERDICT_CLICKHOUSE_URL gave a client, else the primary database's SQL.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { clickHouseAnalysisStore } from '../clickhouse/store.js';
import type { SqlStoreDeps } from '../sql/deps.js';
import { sqlAnalysisStore } from '../sql/store.js';
import type { AnalysisStore } from './contract.js';

export function createAnalysisStore(ctx: SqlStoreDeps & { clickhouse: ClickHouse | null }): AnalysisStore {
  return ctx.clickhouse ? clickHouseAnalysisStore(ctx, ctx.clickhouse) : sqlAnalysisStore(ctx);
}
