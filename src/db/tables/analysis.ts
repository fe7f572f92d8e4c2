/** How a snapshot came to be computed. */
export type SnapshotTrigger = 'api' | 'schedule' | 'final' | 'cli';

/** One computed analysis of an experiment. Rows are never updated: history is the table. */
export interface AnalysisSnapshotsTable {
  /** ULID assigned when the snapshot is stored, so id order is computation order. */
  id: string;
  workspace_id: string;
  experiment_id: string;
  computed_at: number;
  /** 0 or 1: the spec's decision_rule_satisfied, kept as a column so it can be queried. */
  decision_rule_satisfied: number;
  trigger: SnapshotTrigger;
  /** JSON text of every other snapshot field (per_variant, guardrails, decision, SRM, ...). */
  document: string;
}

/** Incremental analysis: a live exposure of the experiment as of its last rollup refresh. */
export interface AnalysisRollupUnitsTable {
  experiment_id: string;
  unit_id: string;
  /** The exposure's id. */
  id: string;
  variant_key: string;
  exposed_at: number;
  source_key_id: string | null;
  /** The assignment's dimension values (JSON) as of the refresh. */
  dimension_values: string | null;
}

/** Incremental analysis: what rebuilds one unit's value of one metric (docs/analysis.md "Incremental analysis"). */
export interface AnalysisRollupValuesTable {
  experiment_id: string;
  unit_id: string;
  metric_id: string;
  /** Events counted in the unit's window. */
  cnt: number;
  /** Sum and count of the numbers at property_path among them. */
  vsum: number;
  vcnt: number;
  /** The same over the CUPED lookback (0 without one). */
  pre_cnt: number;
  pre_vsum: number;
  pre_vcnt: number;
}

/** Incremental analysis: per experiment, the last refresh's watermark and each metric's definition hash (JSON texts). */
export interface AnalysisRollupStateTable {
  experiment_id: string;
  workspace_id: string;
  watermark: string;
  definitions: string;
  refreshed_at: number;
  /** The hash of what analysis_rollup_totals sums (null: no totals kept). */
  totals_plan: string | null;
  /** A SQLite build in steps, in progress (JSON), or null. */
  progress: string | null;
}

/** Incremental analysis: per slice and variant, units and exact sums of each metric (JSON text). */
export interface AnalysisRollupTotalsTable {
  experiment_id: string;
  /** JSON [breakdown index, value]: [-1, null] for the whole experiment. */
  slice: string;
  variant_key: string;
  units: number;
  sums: string;
}

/** Incremental analysis: units a refresh in progress changes. */
export interface AnalysisRollupTouchedTable {
  experiment_id: string;
  unit_id: string;
}

/** ClickHouse: how far an experiment's exposures were copied there (JSON watermark) and the copies' last version. */
export interface ClickHouseExposureMarksTable {
  experiment_id: string;
  watermark: string;
  version: number;
}

/** ClickHouse: the number of the last committed drain into ClickHouse (one row, id 1). */
export interface ClickHouseDrainSequenceTable {
  id: number;
  seq: number;
}

export interface AnalysisTables {
  analysis_snapshots: AnalysisSnapshotsTable;
  analysis_rollup_units: AnalysisRollupUnitsTable;
  analysis_rollup_values: AnalysisRollupValuesTable;
  analysis_rollup_state: AnalysisRollupStateTable;
  analysis_rollup_totals: AnalysisRollupTotalsTable;
  analysis_rollup_touched: AnalysisRollupTouchedTable;
  clickhouse_exposure_marks: ClickHouseExposureMarksTable;
  clickhouse_drain_sequence: ClickHouseDrainSequenceTable;
}
