export type HoldoutStatus = 'draft' | 'running' | 'ended' | 'archived';

export interface HoldoutsTable {
  id: string;
  workspace_id: string;
  environment_id: string;
  name: string;
  description: string | null;
  unit_type: string;
  /** Percent of the environment's units held out, 0.5 to 20. */
  percent: number;
  /** The covered experiments' ids as a JSON array, or null for every experiment started after the holdout. */
  experiment_ids: string | null;
  status: HoldoutStatus;
  /** Seeds the hash that holds units out. */
  salt: string;
  /** Seeds the hash that draws the equal-size comparison sample. */
  sample_salt: string;
  started_at: number | null;
  ended_at: number | null;
  created_at: number;
  updated_at: number;
  /** The metrics its snapshots analyse, as a JSON array, or null (none). */
  metric_ids: string | null;
  /** {method: 'cuped', lookback_days} as JSON, or null (off). */
  variance_reduction: string | null;
}

export interface HoldoutOptOutsTable {
  experiment_id: string;
  workspace_id: string;
  reason: string;
  created_at: number;
}

/** A held-out or sampled unit's first contact: the earliest assign call in a covered experiment that saw it. */
export interface HoldoutContactsTable {
  holdout_id: string;
  unit_id: string;
  workspace_id: string;
  /** The unit's bucket of 10,000 under the holdout's salt (held out below percent × 100). */
  bucket: number;
  /** Its bucket under the sample's salt (sampled, when not held out, below the sample's threshold). */
  sample_bucket: number;
  first_seen_at: number;
}

export interface HoldoutSnapshotsTable {
  id: string;
  workspace_id: string;
  holdout_id: string;
  computed_at: number;
  /** The HoldoutSnapshot as JSON. */
  document: string;
}

export interface HoldoutTables {
  holdouts: HoldoutsTable;
  holdout_opt_outs: HoldoutOptOutsTable;
  holdout_contacts: HoldoutContactsTable;
  holdout_snapshots: HoldoutSnapshotsTable;
}
