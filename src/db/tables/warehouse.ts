export type DataSourceKind = 'postgres' | 'clickhouse';

/** A team's own PostgreSQL or ClickHouse that Verdict reads, read-only (0039). */
export interface DataSourcesTable {
  id: string;
  workspace_id: string;
  name: string;
  kind: DataSourceKind;
  /** The connection URL, sealed with the secret box: it carries the credentials. */
  url_enc: string;
  /** What is shown of it: scheme, user, host, port and database, never the password or query. */
  url_masked: string;
  created_at: number;
  updated_at: number;
}

/** SQL over a data source, with the columns Verdict described when it was saved (0039). */
export interface FactTablesTable {
  id: string;
  workspace_id: string;
  data_source_id: string;
  name: string;
  sql: string;
  unit_id_column: string;
  timestamp_column: string;
  /** JSON array of {name, type, role}: what the source said the query returns. */
  columns: string;
  /** Hours behind the last refresh's cutoff that each incremental refresh re-reads (0043). */
  restatement_hours: number;
  created_at: number;
  updated_at: number;
}

/** SQL over a data source naming who was exposed to which variant of which experiment, and when (0042). */
export interface AssignmentSourcesTable {
  id: string;
  workspace_id: string;
  data_source_id: string;
  name: string;
  sql: string;
  unit_id_column: string;
  experiment_key_column: string;
  variant_key_column: string;
  timestamp_column: string;
  /** JSON array of {name, type, kind}: what the source said the query returns. */
  columns: string;
  created_at: number;
  updated_at: number;
}

/** Per experiment and state key, the time below which its units' rows are settled (0043). */
export interface WarehouseRefreshStatesTable {
  experiment_id: string;
  state_key: string;
  workspace_id: string;
  settled_before: number;
  refreshed_at: number;
}

/** One unit's settled counts and sums per period: m (window), d (denominator), p (lookback) (0043). */
export interface WarehouseUnitStatesTable {
  experiment_id: string;
  state_key: string;
  unit_id: string;
  exposed_at: number;
  m_c: number;
  m_cv: number;
  m_s: number;
  d_c: number;
  d_cv: number;
  d_s: number;
  p_c: number;
  p_cv: number;
  p_s: number;
}

export interface WarehouseTables {
  data_sources: DataSourcesTable;
  fact_tables: FactTablesTable;
  assignment_sources: AssignmentSourcesTable;
  warehouse_refresh_states: WarehouseRefreshStatesTable;
  warehouse_unit_states: WarehouseUnitStatesTable;
}
