import type { ColumnType } from 'kysely';

export type ExperimentStatus = 'draft' | 'running' | 'stopped' | 'archived';
export type AssignmentReason = 'bucketed' | 'forced' | 'mutex_holdout' | 'audience_excluded';

export interface ExperimentsTable {
  id: string;
  workspace_id: string;
  environment_id: string;
  key: string;
  name: string;
  hypothesis: string;
  unit_type: string;
  status: ExperimentStatus;
  /** Variant[] as JSON text, in creation order (the order is part of the bucketing rule). */
  variants: string;
  audience: string | null;
  /** DecisionRule with every default filled, as JSON text. */
  decision_rule: string;
  primary_metric_id: string | null;
  guardrail_metric_ids: string;
  /** Dimension attribute names as a JSON array (0011). */
  dimensions: ColumnType<string, string | undefined, string>;
  mutex_group_id: string | null;
  /** VarianceReduction ({method: 'cuped', lookback_days}) as JSON text, or null for none. */
  variance_reduction: string | null;
  /** Allocation ({type: 'fixed'} or a bandit's settings) as JSON text; null reads as fixed (0016). */
  allocation: ColumnType<string | null, string | null | undefined, string | null>;
  /** A bandit's periods [{started_at, weights, seed}] as JSON text; null reads as none (0016). */
  allocation_periods: ColumnType<string | null, string | null | undefined, string | null>;
  weights_changed: number;
  /** AutoStop ({on_recommendation, on_guardrail_regression, on_srm}) as JSON text, or null for all off (0014). */
  auto_stop: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: number | null;
  stopped_at: number | null;
  stop_reason: string | null;
  outcome_notes: string | null;
  /** 'key', 'person' (an admin UI session) or 'auto'; null while not stopped and before 0023. */
  stopped_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** The snapshot whose auto-stop condition stopped it (stopped_by 'auto'), else null (0023). */
  stop_snapshot_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The variant a stopped experiment keeps serving to every unit (reason "launched"), else null (0030). */
  launched_variant_key: ColumnType<string | null, string | null | undefined, string | null>;
  launched_at: ColumnType<number | null, number | null | undefined, number | null>;
  launch_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Goal metric ids beside the primary, JSON array; null reads as none (0034). */
  secondary_metric_ids: ColumnType<string | null, string | null | undefined, string | null>;
  /** MultipleTesting ({method, scope}) as JSON text; null reads as the default (0034). */
  multiple_testing: ColumnType<string | null, string | null | undefined, string | null>;
  /** Tags as a JSON array; null reads as none (0038). */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** The person (users.id) who owns it, or null (0038). */
  owner_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The owner's name: free text, or the person's name when owner_user_id is set; null for none (0038). */
  owner_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** The assignment source of an experiment assigned elsewhere (analysis-only), else null (0042). */
  assignment_source_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The experiment's key in that source when it differs from `key`, else null (0042). */
  assignment_experiment_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  updated_at: number;
}

/** A saved definition a new experiment starts from (0038). */
export interface ExperimentTemplatesTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  /** The template's fields (TemplateDefinition) as JSON text. */
  definition: string;
  created_at: number;
  updated_at: number;
}

export interface ExperimentOverridesTable {
  experiment_id: string;
  unit_id: string;
  workspace_id: string;
  variant_key: string;
  created_at: number;
}

export interface AssignmentsTable {
  id: string;
  workspace_id: string;
  experiment_id: string;
  unit_id: string;
  /** Null for a mutex holdout. */
  variant_key: string | null;
  reason: AssignmentReason;
  exposure_logged_at: number | null;
  created_at: number;
  /** The experiment's dimensions' values from the first assignment's context, JSON object (0011). */
  dimension_values: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MutexClaimsTable {
  mutex_group_id: string;
  unit_id: string;
  experiment_id: string;
  created_at: number;
}

export interface ExposuresTable {
  id: string;
  workspace_id: string;
  experiment_id: string;
  unit_id: string;
  variant_key: string;
  exposed_at: number;
  superseded_at: number | null;
  /** 'warehouse': read from the experiment's assignment source (0042). */
  source: 'assign' | 'api' | 'warehouse';
  /** The API key that logged the exposure (0011); null for rows written before. */
  source_key_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ExperimentTables {
  experiments: ExperimentsTable;
  experiment_overrides: ExperimentOverridesTable;
  assignments: AssignmentsTable;
  mutex_claims: MutexClaimsTable;
  exposures: ExposuresTable;
  experiment_templates: ExperimentTemplatesTable;
}
