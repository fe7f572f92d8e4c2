// The API's resources under the names the UI uses. They come from web/src/api-types.ts, which
// scripts/web-types.ts generates from openapi.json (`npm run openapi:write`; `openapi:check`
// fails when it is stale), so the UI reads exactly what the server answers. Only what the OpenAPI
// description leaves out (the admin UI's own session routes under /ui) is written by hand here.
import type * as Api from './api-types.js';

export type Experiment = Api.GetExperimentResponse;
export type ExperimentTemplate = Api.GetExperimentTemplateResponse;
export type ExperimentStatus = Experiment['status'];
export type StopReason = NonNullable<Experiment['stop_reason']>;
export type Variant = Experiment['variants'][number];
export type DecisionRule = Experiment['decision_rule'];
export type DecisionMethod = DecisionRule['method'];
/** CUPED with its lookback, or null when off. */
export type VarianceReduction = Experiment['variance_reduction'];
/** See docs/statistics.md section 9. */
export type ExperimentWarning = Experiment['warnings'][number];

export type Environment = Api.ListEnvironmentsResponse['data'][number];

export type Metric = Api.GetMetricResponse;
export type MetricCapping = NonNullable<Metric['capping']>;

export type MutexGroup = Api.GetMutexGroupResponse;

/** A key as listed: never its secret. */
export type ApiKey = Api.ListApiKeysResponse['data'][number];
/** The answer to creating a key: the only time its secret (`key`) is shown. */
export type NewApiKey = Api.CreateApiKeyResponse;

export type AuditEntry = Api.ListAuditResponse['data'][number];

export type Snapshot = Api.GetExperimentResultsResponse;
/** The full history (the default `fields=full`): whole snapshots. */
export type SnapshotHistory = Extract<Api.GetExperimentResultsHistoryResponse, { snapshots: Array<{ breakdowns: unknown }> }>;
/** `?fields=summary`: per snapshot the recommendation and each variant's primary-metric effect. */
export type SnapshotSummaryHistory = Exclude<Api.GetExperimentResultsHistoryResponse, SnapshotHistory>;
export type Recommendation = Snapshot['decision']['recommendation'];
export type VariantPosterior = Snapshot['per_variant'][number];
/** Against the control; the VariantPosterior's `effect` is null on the control. */
export type Effect = NonNullable<VariantPosterior['effect']>;
export type GuardrailResult = Snapshot['guardrails'][number];
export type GuardrailRegression = Snapshot['decision']['guardrail_regressions'][number];
/** A metric result's CUPED report (docs/statistics.md section 2b). */
export type CupedReport = NonNullable<GuardrailResult['cuped']>;
export type Verdict = Snapshot['decision']['verdict'];
export type Breakdown = Snapshot['breakdowns'][number];
export type BreakdownValue = Breakdown['values'][number];

export type Template = Api.GetTemplateResponse;
export type TemplateVersion = Api.GetTemplateVersionResponse;
export type Render = Api.GetRenderResponse;
export type RenderFormat = Render['formats'][number];

/** A webhook source as read: never its secret. */
export type WebhookSource = Api.GetWebhookSourceResponse;
/** The answer to creating a source or rotating its secret: the only time `inbound_secret` is shown. */
export type NewWebhookSource = Api.CreateWebhookSourceResponse;
export type Delivery = Api.ListWebhookDeliveriesResponse['data'][number];

/** An outbound webhook endpoint as read: never its signing secret. */
export type WebhookEndpoint = Api.GetWebhookEndpointResponse;
/** The answer to creating an endpoint or rotating its secret: the only time `secret` is shown. */
export type NewWebhookEndpoint = Api.CreateWebhookEndpointResponse;
export type WebhookEventType = Api.CreateWebhookEndpointRequest['event_types'][number];
/** One event sent (or being sent) to an endpoint, with the state of its attempts. */
export type EndpointDelivery = Api.ListWebhookEndpointDeliveriesResponse['data'][number];
/** Which conditions stop an experiment by themselves. */
export type AutoStop = Experiment['auto_stop'];

export type Lead = Api.GetLeadResponse;
export type TaskToolSettings = Api.GetTaskToolSettingsResponse;

export type Assignment = Api.ListUnitAssignmentsResponse['assignments'][number];

export type Segment = Api.GetSegmentResponse;

/** GET and POST /ui/session when signed in (the session routes are not in openapi.json). */
export type Role = 'viewer' | 'editor' | 'admin';

export interface SessionInfo {
  signed_in: true;
  csrf_token: string;
  expires_at: string;
  /** The key a key's session signed in with; null for a person's session. */
  key: { id: string; name: string; prefix: string; last_four: string } | null;
  /** The person signed in; null for a key's session. */
  user: { id: string; email: string; name: string | null; role: Role } | null;
  role: Role;
  workspace: { id: string; name: string; slug: string };
}

/** One entry of `GET .../results/history?fields=summary`: what the history chart and the list need. */
export type SnapshotSummary = SnapshotSummaryHistory['snapshots'][number];

export type Holdout = Api.GetHoldoutResponse;
export type HoldoutExperiments = Api.ListHoldoutExperimentsResponse;
export type ExperimentHoldouts = Api.GetExperimentHoldoutsResponse;
export type HoldoutSnapshot = Api.GetHoldoutResultsResponse;
