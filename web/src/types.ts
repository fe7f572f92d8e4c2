// Shapes of the API's resources, as the UI uses them (see /v1/openapi.json for the full ones).

export type ExperimentStatus = 'draft' | 'running' | 'stopped' | 'archived';
export type StopReason = 'won' | 'lost' | 'inconclusive' | 'bug' | 'business';
export type DecisionMethod = 'bayesian.posterior_threshold' | 'bayesian.always_valid_evalue' | 'frequentist.sequential_msprt';

export interface Variant {
  id: string;
  key: string;
  weight: number;
  is_control: boolean;
  description?: string;
}

export interface DecisionRule {
  method: DecisionMethod;
  posterior_threshold: number;
  minimum_detectable_effect: number;
  min_sample_per_variant: number;
  max_duration_days: number;
  snapshot_cadence_minutes: number;
}

export interface Experiment {
  id: string;
  environment_id: string;
  key: string;
  name: string;
  hypothesis: string;
  unit_type: string;
  status: ExperimentStatus;
  variants: Variant[];
  audience: Record<string, unknown> | null;
  decision_rule: DecisionRule;
  primary_metric_id: string | null;
  guardrail_metric_ids: string[];
  mutex_group_id: string | null;
  /** CUPED with its lookback, or null when off (absent from servers before CUPED). */
  variance_reduction?: VarianceReduction;
  /** Context attribute names the results are broken down by. */
  dimensions?: string[];
  weights_changed_since_start: boolean;
  started_at: string | null;
  stopped_at: string | null;
  stop_reason: StopReason | null;
  outcome_notes: string | null;
  created_at: string;
  updated_at: string;
  /** Planning warnings computed from the current settings; empty when none. */
  warnings: ExperimentWarning[];
}

/** See docs/statistics.md section 9. */
export interface ExperimentWarning {
  code: 'underpowered';
  message: string;
  estimated_units_per_variant: number | null;
  min_sample_per_variant: number;
  power: number;
  assumed_baseline_rate: number;
}

export interface Environment {
  id: string;
  name: string;
  slug: string;
  created_at: string;
}

export interface MetricCapping {
  type: 'absolute' | 'percentile';
  value: number;
}

export interface Metric {
  id: string;
  key: string;
  name: string;
  description: string | null;
  event_key: string | null;
  kind: 'binary' | 'count' | 'revenue' | 'duration' | 'ratio';
  aggregation: 'sum' | 'mean' | 'count';
  higher_is_better: boolean;
  capping: MetricCapping | null;
  numerator_metric_id: string | null;
  denominator_metric_id: string | null;
  unit_dedup_window: string;
  property_path: string | null;
  created_at: string;
  updated_at: string;
}

export interface MutexGroup {
  id: string;
  key: string;
  name: string;
  experiment_count: number;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  kind: 'server' | 'client';
  prefix: string;
  last_four: string;
  environment_id: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}

export interface AuditEntry {
  id: string;
  action: string;
  target_type: string;
  target_id: string;
  actor_id: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

export interface VariantPosterior {
  variant_key: string;
  is_control?: boolean;
  sample_size: number;
  conversions: number;
  observed_rate?: number | null;
  posterior: { mean: number | null; credible_interval_95: [number, number] | null };
  prob_best?: number | null;
  expected_loss_if_stop_now?: number | null;
  /** Against the control; null on the control (absent in snapshots from before effects). */
  effect?: Effect | null;
}

export interface Effect {
  absolute: { mean: number; credible_interval_95: [number, number] };
  relative: { mean: number | null; credible_interval_95: [number, number] | null };
  chance_to_beat_control: number;
}

export interface GuardrailRegression {
  metric_id: string;
  metric_key: string;
  variant_key: string;
  chance_to_beat_control: number;
}

export type VarianceReduction = { method: 'cuped'; lookback_days: number } | null;

/** A metric result's CUPED report (docs/statistics.md section 2b). */
export interface CupedReport {
  applied: boolean;
  lookback_days: number;
  theta: number | null;
  variance_reduction: number | null;
  note: string | null;
}

export interface GuardrailResult {
  metric_id: string;
  metric_key: string;
  higher_is_better?: boolean;
  cap_applied?: number | null;
  cuped?: CupedReport | null;
  per_variant: VariantPosterior[];
}

export type Verdict = 'keep_running' | 'winner' | 'no_difference' | 'max_duration_reached';

export interface Snapshot {
  id: string;
  experiment_id: string;
  computed_at: string;
  trigger?: string;
  primary_metric?: { id: string; key: string; kind: Metric['kind']; aggregation: string; higher_is_better?: boolean; cap_applied?: number | null; cuped?: CupedReport | null } | null;
  per_variant: VariantPosterior[];
  guardrails?: GuardrailResult[];
  decision_rule_satisfied: boolean;
  decision?: { verdict: Verdict; variant_key: string | null; reason: string; days_elapsed?: number; guardrail_regressions?: GuardrailRegression[] };
  srm_chi_squared_p?: number | null;
  srm_warning?: boolean;
  peek_count_at_computation?: number;
  late_event_count?: number;
  weights_changed_since_start?: boolean;
  /** Absent in snapshots from before breakdowns. */
  breakdowns?: Breakdown[];
}

export interface BreakdownValue {
  value: string;
  units: number;
  per_variant: VariantPosterior[];
  srm_chi_squared_p: number | null;
  srm_warning: boolean;
  significant_after_correction: boolean;
}

export interface Breakdown {
  dimension: string;
  values: BreakdownValue[];
}

export interface SnapshotHistory {
  experiment_id: string;
  snapshots: Snapshot[];
  next_cursor?: string | null;
}

export interface Template {
  id: string;
  name: string;
  body: string;
  created_at: string;
  updated_at: string;
  latest_version: string | null;
}

export interface TemplateVersion {
  template_id: string;
  label: string;
  body_snapshot: string;
  fields_schema: Record<string, unknown>;
  created_at: string;
}

export type RenderFormat = 'html' | 'text' | 'markdown' | 'pdf';

export interface Render {
  id: string;
  template_id: string;
  version: string;
  formats: RenderFormat[];
  status: 'queued' | 'running' | 'resolved' | 'failed';
  outputs: { format: RenderFormat; content_type: string; bytes: number; url?: string }[];
  error: string | null;
}

export interface WebhookSource {
  id: string;
  slug: string;
  name: string;
  enabled: boolean;
  inbound_path?: string;
  previous_secret_expires_at?: string | null;
  created_at: string;
  inbound_secret?: string;
}

export interface Delivery {
  id: string;
  received_at: string;
  outcome: string;
  status_code: number;
  reason: string | null;
  idempotency_key: string | null;
  event_count: number;
  accepted_count: number;
  rejected_count: number;
}

export interface Lead {
  id: string;
  name: string;
  email: string | null;
  status: string;
  task_tool_task_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface SessionInfo {
  signed_in: true;
  csrf_token: string;
  expires_at: string;
  key: { id: string; name: string; prefix: string; last_four: string };
  workspace: { id: string; name: string; slug: string };
}

export interface Assignment {
  experiment_key: string;
  unit_id: string;
  variant: string | null;
  reason: 'bucketed' | 'forced' | 'audience_excluded' | 'mutex_holdout';
  assignment_id?: string;
  exposure_logged_at?: string | null;
}

export interface Segment {
  id: string;
  key: string;
  name: string;
  description: string | null;
  rule: unknown;
  created_at: string;
  updated_at: string;
}
