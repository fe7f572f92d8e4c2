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
}

export interface HoldoutOptOutsTable {
  experiment_id: string;
  workspace_id: string;
  reason: string;
  created_at: number;
}

export interface HoldoutTables {
  holdouts: HoldoutsTable;
  holdout_opt_outs: HoldoutOptOutsTable;
}
