/**
 * The ClickHouse tables (docs/deployment.md "ClickHouse"), created and upgraded by `verdict
 * migrate` (and by `serve`, as the primary database's migrations are). Each step is applied once
 * and recorded in verdict_clickhouse_migrations.
 *
 * - events: ReplacingMergeTree ordered by (workspace_id, event_key, unit_id, occurred_at, id),
 *   partitioned by month. The drainer may insert a batch twice (a kill -9 between the insert and
 *   the buffer's commit); both copies share the whole sorting key, so merges keep one and reads
 *   collapse the rest with FINAL: every acknowledged event counts once.
 * - exposures: the mirror of the primary database's exposures the analysis joins
 *   (exposures-mirror.ts), a ReplacingMergeTree by (experiment_id, unit_id, id) whose newest
 *   version carries the row's superseded mark.
 * With a cluster, each table is a Replicated table on every shard behind a Distributed table of
 * the same name, sharded by cityHash64(unit_id): a unit's events and exposures meet on one shard,
 * so the per-unit aggregation stays local to it.
 */
import type { Logger } from 'pino';
import type { ClickHouseConfig } from '../config.js';
import { openClickHouse, type ClickHouse } from './client.js';

interface TableSpec {
  name: string;
  columns: string;
  /** The MergeTree engine's family member and arguments after the Replicated path (e.g. "ReplacingMergeTree(version)"). */
  engine: { family: string; args: string[] };
  rest: string;
}

const EVENTS: TableSpec = {
  name: 'events',
  columns: `id String, workspace_id String, unit_id String, event_key String, properties String,
    occurred_at Int64, received_at Int64, late UInt8`,
  engine: { family: 'ReplacingMergeTree', args: [] },
  rest: `PARTITION BY toYYYYMM(fromUnixTimestamp64Milli(occurred_at))
    ORDER BY (workspace_id, event_key, unit_id, occurred_at, id)`,
};

const EXPOSURES: TableSpec = {
  name: 'exposures',
  columns: `id String, workspace_id String, experiment_id String, unit_id String, variant_key String,
    exposed_at Int64, superseded_at Nullable(Int64), source_key_id Nullable(String), dimension_values Nullable(String), version UInt64`,
  engine: { family: 'ReplacingMergeTree', args: ['version'] },
  rest: 'ORDER BY (experiment_id, unit_id, id)',
};

function onCluster(cluster: string | null): string {
  return cluster === null ? '' : ` ON CLUSTER ${cluster}`;
}

/** CREATE statements of one table: the table itself, or (cluster) its Replicated local table and the Distributed table in front. */
export function tableStatements(spec: TableSpec, cluster: string | null): string[] {
  if (cluster === null) {
    const engine = `${spec.engine.family}(${spec.engine.args.join(', ')})`;
    return [`CREATE TABLE IF NOT EXISTS ${spec.name} (${spec.columns}) ENGINE = ${engine} ${spec.rest}`];
  }
  const local = `${spec.name}_local`;
  const path = `'/clickhouse/tables/{shard}/{database}/${local}'`;
  const engine = `Replicated${spec.engine.family}(${[path, "'{replica}'", ...spec.engine.args].join(', ')})`;
  return [
    `CREATE TABLE IF NOT EXISTS ${local}${onCluster(cluster)} (${spec.columns}) ENGINE = ${engine} ${spec.rest}`,
    `CREATE TABLE IF NOT EXISTS ${spec.name}${onCluster(cluster)} AS ${local} ENGINE = Distributed(${cluster}, currentDatabase(), ${local}, cityHash64(unit_id))`,
  ];
}

/** Settings of a table without replication: insert tokens de-duplicate the last batches (the replicated engines do by default). */
function withDedupWindow(statement: string, cluster: string | null): string {
  if (cluster !== null || !statement.includes('ENGINE = ReplacingMergeTree()')) return statement;
  return `${statement} SETTINGS non_replicated_deduplication_window = 1000`;
}

/** The migrations, in order; a step's statements run in order and are idempotent (IF NOT EXISTS). */
export function clickhouseMigrations(cluster: string | null): Array<{ name: string; statements: string[] }> {
  return [
    {
      name: '0001_events_and_exposures',
      statements: [...tableStatements(EVENTS, cluster), ...tableStatements(EXPOSURES, cluster)].map((statement) => withDedupWindow(statement, cluster)),
    },
  ];
}

const LEDGER = 'verdict_clickhouse_migrations';

/** Applies the pending migrations; returns the names applied. */
export async function migrateClickHouse(ch: ClickHouse): Promise<string[]> {
  const ledger =
    ch.cluster === null
      ? `CREATE TABLE IF NOT EXISTS ${LEDGER} (name String, applied_at Int64) ENGINE = ReplacingMergeTree ORDER BY name`
      : `CREATE TABLE IF NOT EXISTS ${LEDGER}${onCluster(ch.cluster)} (name String, applied_at Int64) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{database}/${LEDGER}', '{replica}') ORDER BY name`;
  await ch.client.command({ query: ledger });
  const done = await ch.client.query({ query: `SELECT name FROM ${LEDGER} FINAL`, format: 'JSONEachRow' });
  const applied = new Set((await done.json<{ name: string }>()).map((row) => row.name));
  const now: string[] = [];
  for (const migration of clickhouseMigrations(ch.cluster)) {
    if (applied.has(migration.name)) continue;
    for (const statement of migration.statements) await ch.client.command({ query: statement });
    await ch.client.insert({ table: LEDGER, values: [{ name: migration.name, applied_at: Date.now() }], format: 'JSONEachRow' });
    now.push(migration.name);
  }
  return now;
}

/** Opens ClickHouse for a process, migrating it first when the process migrates the primary database. */
export async function openClickHouseFor(config: ClickHouseConfig, logger: Logger, migrate: boolean): Promise<ClickHouse> {
  const clickhouse = await openClickHouse(config);
  if (!migrate) return clickhouse;
  const applied = await migrateClickHouse(clickhouse);
  if (applied.length > 0) logger.info({ applied }, 'ClickHouse migrated');
  return clickhouse;
}
