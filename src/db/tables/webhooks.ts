/** A configured sender of signed inbound webhooks; its slug is part of the inbound URL. */
export interface WebhookSourcesTable {
  id: string;
  workspace_id: string;
  /** Unique per workspace; `^[a-z0-9-]{1,64}$`. */
  slug: string;
  name: string;
  /** 1 or 0: a disabled source answers 409 to inbound posts. */
  enabled: number;
  /** The current `inbound_secret`, sealed (AES-GCM): HMACs must be recomputed, so no hash. */
  secret_enc: string;
  /** The secret replaced by the last rotation, sealed; it keeps verifying until the expiry below. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export type WebhookDeliveryOutcome = 'accepted' | 'replayed' | 'unauthorized' | 'disabled' | 'invalid' | 'idempotency_conflict' | 'failed';

/** One post to an inbound URL whose source was found, whatever became of it. */
export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  source_id: string;
  received_at: number;
  outcome: WebhookDeliveryOutcome;
  status_code: number;
  reason: string | null;
  idempotency_key: string | null;
  /** Events in the body (0 when the body was not read or not understood). */
  event_count: number;
  accepted_count: number;
  rejected_count: number;
}

export type IdempotencyState = 'in_flight' | 'completed';

/**
 * Remembered `Idempotency-Key`s, one row per (workspace, source, key). The row is inserted
 * before the ingest (in_flight) so a concurrent copy finds it, then completed with the response.
 */
export interface WebhookIdempotencyKeysTable {
  workspace_id: string;
  source_id: string;
  idempotency_key: string;
  /** SHA-256 hex of the raw body: the same key with another body is refused. */
  fingerprint: string;
  state: IdempotencyState;
  /** Random per claim: only the claimer completes or releases the row. */
  lock_token: string;
  locked_at: number;
  response_status: number | null;
  /** JSON text of the response body. */
  response_body: string | null;
  created_at: number;
  /** created_at + 24 hours; from then on the row counts as absent. */
  expires_at: number;
}

/** A local record that a task in the task-management tool mirrors its status onto. */
export interface LeadsTable {
  id: string;
  workspace_id: string;
  name: string;
  email: string | null;
  status: string;
  /** Unique per workspace when set (NULLs are distinct). */
  task_tool_task_id: string | null;
  /**
   * When the task-tool status change last mirrored onto the lead happened (the history item's
   * `date`), so a callback that arrives late cannot overwrite a newer status. Internal.
   */
  task_tool_status_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Per-workspace task-tool configuration; absent row = empty mapping. */
export interface TaskToolSettingsTable {
  workspace_id: string;
  /** JSON object text: task-tool status name -> lead status. */
  status_mapping: string;
  /** The workspace webhook secret replaced by the last rotation, sealed, and until when it verifies. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  updated_at: number;
}

/** Task-tool history items already applied, so a redelivered callback changes nothing twice. */
export interface TaskToolHistoryItemsTable {
  workspace_id: string;
  item_id: string;
  task_id: string;
  processed_at: number;
}

export interface WebhookTables {
  webhook_sources: WebhookSourcesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_idempotency_keys: WebhookIdempotencyKeysTable;
  leads: LeadsTable;
  task_tool_settings: TaskToolSettingsTable;
  task_tool_history_items: TaskToolHistoryItemsTable;
}
