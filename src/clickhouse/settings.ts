/**
 * The memory a ClickHouse statement of Verdict's may use (docs/deployment.md "ClickHouse",
 * "Memory"): the embedded engine runs inside the Verdict process that also serves the API, so
 * its statements are bounded by default; a server keeps its own profile unless
 * VERDICT_CLICKHOUSE_MAX_MEMORY is set. Past half the limit, aggregation and sorting spill to
 * disk, and a join spills through the grace hash algorithm (buckets on disk) past a quarter;
 * a statement that still needs more fails with ClickHouse's MEMORY_LIMIT_EXCEEDED instead of
 * growing the process.
 */
import type { ClickHouseConfig } from '../config.js';

/** The embedded engine's limit per statement when none is configured. */
export const EMBEDDED_MAX_MEMORY = 2 * 2 ** 30;

/** The settings that bound a statement's memory, from the configured limit (none: {}). */
export function memorySettings(config: Pick<ClickHouseConfig, 'kind' | 'maxMemoryBytes'>): Record<string, string> {
  const limit = config.maxMemoryBytes ?? (config.kind === 'embedded' ? EMBEDDED_MAX_MEMORY : 0);
  if (limit === 0) return {};
  return {
    max_memory_usage: String(limit),
    max_bytes_before_external_group_by: String(Math.floor(limit / 2)),
    max_bytes_before_external_sort: String(Math.floor(limit / 2)),
    // The default hash join fails past max_bytes_in_join; grace hash splits both sides into buckets on disk instead.
    join_algorithm: 'grace_hash',
    max_bytes_in_join: String(Math.floor(limit / 4)),
  };
}
