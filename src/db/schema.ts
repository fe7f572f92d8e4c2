import type { Generated } from 'kysely';
import type { AnalysisTables } from './tables/analysis.js';
import type { CatalogueTables } from './tables/catalogue.js';
import type { EventTables } from './tables/events.js';
import type { OutboundTables } from './tables/outbound.js';
import type { ExperimentTables } from './tables/experiments.js';
import type { HoldoutTables } from './tables/holdouts.js';
import type { PeopleTables } from './tables/people.js';
import type { SessionTables } from './tables/sessions.js';
import type { TemplateTables } from './tables/templates.js';
import type { WarehouseTables } from './tables/warehouse.js';
import type { WebhookTables } from './tables/webhooks.js';

// Timestamps are stored as epoch milliseconds (bigint) in both databases: numeric comparison and
// window arithmetic work the same everywhere, and the API converts them to ISO 8601 at the edge.
// JSON documents are stored as text for the same reason.

export interface WorkspacesTable {
  id: string;
  name: string;
  slug: string;
  webhook_secret_enc: string;
  created_at: number;
}

export interface EnvironmentsTable {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  environment_id: string | null;
  name: string;
  kind: 'server' | 'client';
  prefix: string;
  last_four: string;
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface AuditEntriesTable {
  id: string;
  workspace_id: string;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  payload: string;
  created_at: number;
}

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';
/**
 * Which pool of a worker runs the job: `outbound` for work that waits on other people's servers
 * (webhook deliveries), shared fairly between workspaces; `general` for everything else.
 */
export type JobLane = 'general' | 'outbound';

export interface JobsTable {
  id: string;
  name: string;
  payload: string;
  workspace_id: string | null;
  lane: Generated<JobLane>;
  status: JobStatus;
  attempts: Generated<number>;
  max_attempts: number;
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  /** Unique when set: enqueueing the same key twice keeps one job (used by the scheduler). */
  job_key: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** Every table; each feature area adds its own interface to the extends list. */
export interface Database
  extends
    AnalysisTables,
    CatalogueTables,
    EventTables,
    ExperimentTables,
    TemplateTables,
    SessionTables,
    WebhookTables,
    OutboundTables,
    PeopleTables,
    HoldoutTables,
    WarehouseTables {
  workspaces: WorkspacesTable;
  environments: EnvironmentsTable;
  api_keys: ApiKeysTable;
  audit_entries: AuditEntriesTable;
  jobs: JobsTable;
}
