export type WebhookEndpointFormat = 'verdict' | 'slack';
export type OutboundDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A customer URL that receives signed event deliveries (0014). */
export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  /** Where deliveries go, sealed with the secret box: the URL can be the credential (0028). */
  url_enc: string;
  /** What is shown of the URL: scheme, host and port, the path masked (endpoint-url.ts). */
  url_masked: string;
  description: string;
  /** JSON array of event types, or ["*"] for every type. */
  event_types: string;
  /** 1 or 0: a disabled endpoint is sent nothing new. */
  enabled: number;
  format: WebhookEndpointFormat;
  /** The signing secret (whsec_...), sealed with the secret box: HMACs need it back. */
  secret_enc: string;
  /** The secret replaced by the last rotation, sealed; it keeps signing until the expiry below. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  /** When the current run of failed attempts began (null after a success); three days of it disables the endpoint. */
  failing_since: number | null;
  /** Why the service disabled the endpoint, or null. */
  disabled_reason: string | null;
  /** JSON array of the experiment ids whose events the endpoint is sent, or null for every experiment (0037). */
  experiment_ids: string | null;
  created_at: number;
  updated_at: number;
}

/** One event for one endpoint: the body as sent and the state of its attempts. */
export interface WebhookEndpointDeliveriesTable {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The experiment the event is about; null for a test ping and for deliveries made before 0037. */
  experiment_id: string | null;
  /** The request body exactly as every attempt sends it. */
  body: string;
  status: OutboundDeliveryStatus;
  attempts: number;
  response_status: number | null;
  /** The first 1 KB of the last response body. */
  response_body: string | null;
  duration_ms: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
  /** No retry is scheduled after this (three days after the event, or after a redelivery). */
  retry_until: number;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** Whether an alert condition is active for an experiment (so it fires once per activation). */
export interface AlertStatesTable {
  experiment_id: string;
  condition: string;
  workspace_id: string;
  active: number;
  /** What the condition last was (e.g. the recommendation), as JSON text. */
  value: string | null;
  snapshot_id: string | null;
  changed_at: number;
}

export interface OutboundTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_endpoint_deliveries: WebhookEndpointDeliveriesTable;
  alert_states: AlertStatesTable;
}
