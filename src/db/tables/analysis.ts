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

export interface AnalysisTables {
  analysis_snapshots: AnalysisSnapshotsTable;
}
