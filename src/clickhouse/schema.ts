/**
 * The ClickHouse tables (docs/deployment.md "ClickHouse"), created and upgraded by `verdict
 * migrate` (and by `serve`, as the primary database's migrations are). Each step is applied once
 * and recorded in verdict_clickhouse_migrations.
 *
 * - events: ReplacingMergeTree ordered by (workspace_id, event_key, unit_id, occurred_at, id),
 *   partitioned by month. Reads need no FINAL: rows of a drain that never committed are never read
 *   and deleted by the next drain, and a batch delivered again skips the events already stored
 *   (clickhouse/events.ts). The engine stays a ReplacingMergeTree: copies written before 0003 share
 *   the whole sorting key, so a merge keeps one.
 * - exposures: the mirror of the primary database's exposures the analysis joins
 *   (exposures-mirror.ts), a ReplacingMergeTree by (experiment_id, unit_id, id) whose newest
 *   version carries the row's superseded mark.
 * - events.drain_seq (0002): the number of the drain that inserted the row (clickhouse/events.ts),
 *   the incremental analysis's watermark; rows from before it read 0.
 * - 0003 collapses such older copies once (OPTIMIZE ... FINAL), now that reads no longer do.
 * - 0004 rewrites, once, the properties texts drained before integer literals beyond 64 bits were
 *   written in exponent form (exponent-form-rewrite.ts).
 * - rollup_state.totals_plan, totals (0005): the per-variant and per-slice totals an incremental
 *   refresh keeps with the rollups, committed in the same row (features/analysis/clickhouse/totals.ts);
 *   rollup_units.source_key_id, dimension_values: the exposure's breakdown values as of the refresh
 *   that wrote the row (the mirror rewrites an exposure's values with its unit's current assignment).
 * - rollup_state.slices (0006): each metric's slices kept beside the totals (metric-slices.ts).
 * - rollup_new_events, rollup_touched (0007): a refresh's new events and touched units, written
 *   once under its version and joined by its later statements (refresh-sql.ts).
 * - rollup_begun (0008): each refresh's version, inserted before it writes (rollups.ts prelude).
 * - rollup_units, rollup_values, rollup_state, rollup_changed (0002): the incremental analysis's
 *   per-unit rollups (features/analysis/clickhouse/rollups.ts). Each refresh writes its rows with a
 *   new version and commits by inserting its rollup_state row; reads take each key's newest row at
 *   or below the committed version, so rows of a refresh killed before its commit are never read.
 * With a cluster, each table is a Replicated table on every shard behind a Distributed table of
 * the same name, sharded by cityHash64(unit_id): a unit's events and exposures meet on one shard,
 * so the per-unit aggregation stays local to it.
 */
import type { Logger } from 'pino';
import type { ClickHouseConfig } from '../config.js';
import { openClickHouse, type ClickHouse } from './client.js';
import { rewriteExponentForm } from './exponent-form-rewrite.js';
import { migrateWhenReachable } from './reachability.js';

interface TableSpec {
  name: string;
  columns: string;
  /** The MergeTree engine's family member and arguments after the Replicated path (e.g. "ReplacingMergeTree(version)"). */
  engine: { family: string; args: string[] };
  rest: string;
  /** The Distributed table's sharding key (default: cityHash64(unit_id)). */
  shardKey?: string;
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

const ROLLUP_UNITS: TableSpec = {
  name: 'rollup_units',
  columns: `experiment_id String, unit_id String, version UInt64, exposure_id String, variant_key String, exposed_at Int64`,
  engine: { family: 'ReplacingMergeTree', args: ['version'] },
  rest: 'ORDER BY (experiment_id, unit_id)',
};

const ROLLUP_VALUES: TableSpec = {
  name: 'rollup_values',
  columns: `experiment_id String, metric_id String, generation UInt64, unit_id String, version UInt64,
    cnt UInt64, vsum Decimal256(20), vcnt UInt64, pre_cnt UInt64, pre_vsum Decimal256(20), pre_vcnt UInt64`,
  engine: { family: 'ReplacingMergeTree', args: ['version'] },
  rest: 'ORDER BY (experiment_id, metric_id, generation, unit_id)',
};

const ROLLUP_STATE: TableSpec = {
  name: 'rollup_state',
  columns: `experiment_id String, version UInt64, watermark UInt64, units_from UInt64,
    slot_ids Array(String), slot_generations Array(UInt64), definitions String`,
  engine: { family: 'ReplacingMergeTree', args: ['version'] },
  rest: 'ORDER BY experiment_id',
  shardKey: 'cityHash64(experiment_id)',
};

const ROLLUP_CHANGED: TableSpec = {
  name: 'rollup_changed',
  columns: `experiment_id String, version UInt64, unit_id String, created_at DateTime DEFAULT now()`,
  engine: { family: 'MergeTree', args: [] },
  rest: 'ORDER BY (experiment_id, version, unit_id) TTL created_at + INTERVAL 1 DAY',
};

/**
 * 0007: what one incremental refresh reads more than once, written once under its version
 * (features/analysis/clickhouse/refresh-sql.ts): the new events of its metrics' keys, and the
 * units it touches with their live exposure time. Never read by another refresh (each reads its
 * own version); a day's TTL drops them.
 */
const ROLLUP_NEW_EVENTS: TableSpec = {
  name: 'rollup_new_events',
  columns: `experiment_id String, version UInt64, event_key String, unit_id String, occurred_at Int64, properties String,
    created_at DateTime DEFAULT now()`,
  engine: { family: 'MergeTree', args: [] },
  rest: 'ORDER BY (experiment_id, version, event_key, unit_id) TTL created_at + INTERVAL 1 DAY',
};

const ROLLUP_TOUCHED: TableSpec = {
  name: 'rollup_touched',
  columns: `experiment_id String, version UInt64, unit_id String, exposed_at Int64, changed UInt8, variant_key String,
    source_key_id Nullable(String), dimension_values Nullable(String), created_at DateTime DEFAULT now()`,
  engine: { family: 'MergeTree', args: [] },
  rest: 'ORDER BY (experiment_id, version, unit_id) TTL created_at + INTERVAL 1 DAY',
};

/**
 * 0008: the version of every incremental refresh of an experiment, inserted before it writes any
 * row (features/analysis/clickhouse/rollups.ts). Its newest row is above every rollup row written,
 * so a refresh reads one small table to take a newer version and to know whether rows of one that
 * never committed exist, instead of max(version) over the whole rollups; merges keep one row per
 * experiment. Filled once from the tables a refresh writes.
 */
const ROLLUP_BEGUN: TableSpec = {
  name: 'rollup_begun',
  columns: 'experiment_id String, version UInt64',
  engine: { family: 'ReplacingMergeTree', args: ['version'] },
  rest: 'ORDER BY experiment_id',
  shardKey: 'cityHash64(experiment_id)',
};

function refreshesBegunStatements(cluster: string | null): string[] {
  const written = ['rollup_units', 'rollup_values', 'rollup_changed', 'rollup_new_events', 'rollup_touched']
    .map((table) => `SELECT experiment_id, max(version) AS version FROM ${table} GROUP BY experiment_id`)
    .join(' UNION ALL ');
  return [
    ...tableStatements(ROLLUP_BEGUN, cluster),
    `INSERT INTO rollup_begun (experiment_id, version) SELECT experiment_id, max(version) FROM (${written}) GROUP BY experiment_id`,
  ];
}

/** events.drain_seq and its skip index (on the local tables with a cluster, the column on the Distributed one too). */
function drainSeqStatements(cluster: string | null): string[] {
  const column = 'ADD COLUMN IF NOT EXISTS drain_seq UInt64 DEFAULT 0';
  const index = 'ADD INDEX IF NOT EXISTS events_drain_seq drain_seq TYPE minmax GRANULARITY 1';
  if (cluster === null) return [`ALTER TABLE events ${column}`, `ALTER TABLE events ${index}`];
  return [
    `ALTER TABLE events_local${onCluster(cluster)} ${column}`,
    `ALTER TABLE events_local${onCluster(cluster)} ${index}`,
    `ALTER TABLE events${onCluster(cluster)} ${column}`,
  ];
}

/** Columns added to a table (on a cluster: to its local tables and to the Distributed one). */
function addColumns(table: string, columns: readonly string[], cluster: string | null): string[] {
  const added = columns.map((column) => `ADD COLUMN IF NOT EXISTS ${column}`).join(', ');
  if (cluster === null) return [`ALTER TABLE ${table} ${added}`];
  return [`ALTER TABLE ${table}_local${onCluster(cluster)} ${added}`, `ALTER TABLE ${table}${onCluster(cluster)} ${added}`];
}

/**
 * 0005: the totals a refresh maintains, committed with its rollup_state row, and the breakdown
 * values each unit's rows were built with (features/analysis/clickhouse/totals.ts).
 */
function maintainedTotalsStatements(cluster: string | null): string[] {
  return [
    ...addColumns('rollup_state', ["totals_plan String DEFAULT ''", "totals String DEFAULT ''", 'mirror_seen UInt64 DEFAULT 0'], cluster),
    ...addColumns('rollup_units', ['source_key_id Nullable(String)', 'dimension_values Nullable(String)'], cluster),
  ];
}

/** 0006: each metric's slices an incremental refresh keeps beside the totals (features/analysis/clickhouse/metric-slices.ts). */
function metricSlicesStatements(cluster: string | null): string[] {
  return addColumns('rollup_state', ["slices String DEFAULT ''"], cluster);
}

/** 0003: reads of events stopped collapsing copies (FINAL); merge away the copies older drains may have left, once. */
function collapseCopies(cluster: string | null): string[] {
  return [cluster === null ? 'OPTIMIZE TABLE events FINAL' : `OPTIMIZE TABLE events_local${onCluster(cluster)} FINAL`];
}

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
    `CREATE TABLE IF NOT EXISTS ${spec.name}${onCluster(cluster)} AS ${local} ENGINE = Distributed(${cluster}, currentDatabase(), ${local}, ${spec.shardKey ?? 'cityHash64(unit_id)'})`,
  ];
}

/** Settings of a table without replication: insert tokens de-duplicate the last batches (the replicated engines do by default). */
function withDedupWindow(statement: string, cluster: string | null): string {
  if (cluster !== null || !statement.includes('ENGINE = ReplacingMergeTree()')) return statement;
  return `${statement} SETTINGS non_replicated_deduplication_window = 1000`;
}

/** A step: its statements, in order, then its `run` (a rewrite of rows); both idempotent. */
export interface ClickHouseMigration {
  name: string;
  statements: string[];
  run?: (ch: ClickHouse) => Promise<unknown>;
}

/** The migrations, in order; a step's statements run in order and are idempotent (IF NOT EXISTS). */
export function clickhouseMigrations(cluster: string | null): ClickHouseMigration[] {
  return [
    {
      name: '0001_events_and_exposures',
      statements: [...tableStatements(EVENTS, cluster), ...tableStatements(EXPOSURES, cluster)].map((statement) => withDedupWindow(statement, cluster)),
    },
    {
      name: '0002_incremental_rollups',
      statements: [
        ...drainSeqStatements(cluster),
        ...[ROLLUP_UNITS, ROLLUP_VALUES, ROLLUP_STATE, ROLLUP_CHANGED].flatMap((spec) => tableStatements(spec, cluster)),
      ],
    },
    { name: '0003_events_read_without_final', statements: collapseCopies(cluster) },
    { name: '0004_properties_exponent_form', statements: [], run: rewriteExponentForm },
    { name: '0005_maintained_totals', statements: maintainedTotalsStatements(cluster) },
    { name: '0006_metric_slices', statements: metricSlicesStatements(cluster) },
    { name: '0007_refresh_scratch', statements: [ROLLUP_NEW_EVENTS, ROLLUP_TOUCHED].flatMap((spec) => tableStatements(spec, cluster)) },
    { name: '0008_refreshes_begun', statements: refreshesBegunStatements(cluster) },
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
    await migration.run?.(ch);
    await ch.client.insert({ table: LEDGER, values: [{ name: migration.name, applied_at: Date.now() }], format: 'JSONEachRow' });
    now.push(migration.name);
  }
  return now;
}

/**
 * Opens ClickHouse for a process, migrating it first when the process migrates the primary
 * database. A server that cannot be reached does not stop the start: the migration is retried in
 * the background until it answers (reachability.ts), and closing the connection ends the retries.
 */
export async function openClickHouseFor(config: ClickHouseConfig, logger: Logger, migrate: boolean): Promise<ClickHouse> {
  const clickhouse = await openClickHouse(config);
  if (!migrate) return clickhouse;
  const retries = await migrateWhenReachable(clickhouse, migrateClickHouse, logger);
  return {
    ...clickhouse,
    close: async () => {
      retries.stop();
      await clickhouse.close();
    },
  };
}
