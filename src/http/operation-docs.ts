import type { RouteOptions } from 'fastify';
import type { AuthScope } from './auth.js';
import { PAGED, type OperationDoc } from './operation-doc.js';
import { EXPERIMENT_TEMPLATE_OPERATION_DOCS } from './operation-docs-experiment-templates.js';
import { HOLDOUT_OPERATION_DOCS } from './operation-docs-holdouts.js';
import { PEOPLE_OPERATION_DOCS } from './operation-docs-people.js';
import { WAREHOUSE_OPERATION_DOCS } from './operation-docs-warehouse.js';

/**
 * The one-line summary and the description of every API operation, keyed by operationId. They
 * live here, not beside each route, so the API reference reads as one document and a route added
 * anywhere is caught by the test that every operation is described (test/foundation/openapi-docs.test.ts).
 * A description says what the operation does and its notable errors; who may call it is added
 * from the route's declared auth scope, so it cannot drift from what the server enforces.
 */
const CALLERS: Record<AuthScope, string> = {
  server: 'Who may call: a server key (a client key gets 403).',
  client: 'Who may call: a server key or a client key; a key bound to an environment sees only that environment’s experiments.',
  public: 'Who may call: anyone; no API key.',
};

export const OPERATION_DOCS: Record<string, OperationDoc> = {
  // Health and workspace
  health: { summary: 'Liveness probe', description: 'Answers `{status: "ok"}` without touching the database, so it stays cheap under load.' },
  readiness: {
    summary: 'Readiness probe',
    description: 'For load balancers: 200 when the database answers and the event buffer (embedded or Redis) is reachable, 503 with what failed otherwise.',
  },
  getMetrics: {
    summary: 'Prometheus metrics',
    description:
      'Prometheus text exposition: requests and latency per route, event buffer, job queue, snapshots, cache hit ratios, process figures; ' +
      'with `serve --processes N`, summed over all processes (503 when the other processes do not answer in time). Off with `VERDICT_METRICS=0`. See docs/observability.md.',
  },
  getCurrentWorkspace: {
    summary: 'Get the caller’s workspace',
    description: 'The workspace (tenant) the calling key belongs to: id, name, slug. 404 if it no longer exists.',
  },
  listEnvironments: { summary: 'List environments', description: `The workspace’s environments (production, staging, ...), oldest first. ${PAGED}` },
  createEnvironment: {
    summary: 'Create an environment',
    description:
      'Adds a deployment stage; experiments and API keys can be bound to it. 409 when the slug is taken in the workspace; 422 for the reserved slug `all`. Audit-logged.',
  },

  // API keys and audit
  listApiKeys: {
    summary: 'List API keys',
    description: `Keys of the workspace, oldest first, with only their prefix and last four characters; \`include_revoked=true\` adds revoked ones. ${PAGED}`,
  },
  createApiKey: {
    summary: 'Create an API key',
    description:
      'Issues a server or client key, optionally bound to one environment. The full `key` is in this response only: store it. 422 when `environment_id` names no environment of the workspace. Audit-logged (never the secret).',
  },
  revokeApiKey: {
    summary: 'Revoke an API key',
    description:
      'The key answers 401 from then on (within `VERDICT_KEY_CACHE_TTL_MS`, default 5 s, on every process). Idempotent; 404 when no such key exists in the workspace. Audit-logged.',
  },
  listAudit: {
    summary: 'List the audit log',
    description: `Every mutation and every admin-UI peek, newest first. Filter by \`action\`, \`target_type\`, \`target_id\`, \`since\` (inclusive) and \`until\` (exclusive); filters combine with AND. ${PAGED}`,
  },

  // Events
  trackEvent: {
    summary: 'Track one event',
    description:
      'Validates, de-duplicates on `client_event_id` (30 days; a repeat answers 202 with `idempotent_replay: true`) and durably buffers one event; it is stored shortly after the 202. 412 when `occurred_at` is more than 30 days old; 429 with Retry-After when the buffer is full; 503 when the buffer cannot be reached (nothing stored).',
  },
  trackEventBatch: {
    summary: 'Track up to 500 events',
    description:
      '1 to 500 events; each is accepted or listed in `rejected` with its index and reason, so one bad event does not fail the rest. 429 and 503 as for a single event, for the whole batch.',
  },
  getEventBufferStatus: {
    summary: 'Event buffer status',
    description:
      'How many acknowledged events wait to be stored, across all workspaces (the buffer is shared), for operators watching back-pressure. 503 when the buffer cannot be reached.',
  },

  // Metrics and segments
  listMetrics: { summary: 'List metrics', description: `The workspace’s metrics, oldest first. ${PAGED}` },
  createMetric: {
    summary: 'Create a metric',
    description:
      'Defines what an experiment measures: events with `event_key`, aggregated per unit within the dedup window. Rules beyond the schema (aggregation per kind, property_path, window) are in docs/metrics.md and answer 422. 409 when the key is taken. Audit-logged.',
  },
  getMetric: { summary: 'Get a metric', description: 'One metric by id; 404 when there is none in the workspace.' },
  updateMetric: {
    summary: 'Edit a metric',
    description:
      'Changes name, description, higher_is_better, capping, property_path or unit_dedup_window; key and kind are fixed (422). Later snapshots use the new definition. 404 for a metric of another workspace. Audit-logged.',
  },
  deleteMetric: {
    summary: 'Delete a metric',
    description:
      '409 while a draft or running experiment or a ratio metric uses it (`referrers` lists them); 404 for a metric of another workspace. Audit-logged.',
  },
  listSegments: { summary: 'List segments', description: `The workspace’s reusable audience filters, oldest first. ${PAGED}` },
  createSegment: {
    summary: 'Create a segment',
    description:
      'Saves a reusable audience filter that audiences name as `{"segment": key}`. Referenced segments must exist; cycles and chains over 5 levels answer 422. 409 when the key is taken. Audit-logged.',
  },
  getSegment: { summary: 'Get a segment', description: 'One segment by id; 404 when there is none in the workspace.' },
  updateSegment: {
    summary: 'Update a segment',
    description: 'Changes name, description or rule; the key is fixed. An unchanged body changes nothing and logs nothing. 404, 422 as for create.',
  },
  deleteSegment: {
    summary: 'Delete a segment',
    description:
      'Deletes a segment nothing refers to. 409 while another segment or a non-archived experiment refers to it (`referrers` lists them); 404 when there is none. Audit-logged.',
  },

  // Templates and renders
  listTemplates: { summary: 'List templates', description: `The workspace’s template drafts (deleted ones excluded), oldest first. ${PAGED}` },
  createTemplate: {
    summary: 'Create a template draft',
    description: 'Creates a mutable draft. A body that does not compile answers 422 with the line and column. Audit-logged.',
  },
  getTemplate: { summary: 'Get a template draft', description: 'The current draft; 404 when there is none or it was deleted.' },
  updateTemplate: {
    summary: 'Edit a template draft',
    description: 'Edits the draft; frozen versions never change. 422 when the new body does not compile; 404 when there is no such template. Audit-logged.',
  },
  deleteTemplate: {
    summary: 'Delete a template draft',
    description: 'Deletes the draft; its versions stay readable and renderable. 404 when there is no such template. Audit-logged.',
  },
  freezeTemplateVersion: {
    summary: 'Freeze a template version',
    description:
      'Freezes the current draft as the next version (v1, v2, ...): body, fields schema and label are captured together and never change. 409 when the draft no longer compiles. Audit-logged.',
  },
  listTemplateVersions: {
    summary: 'List template versions',
    description: 'The frozen versions, v1 first; also after the template was deleted. 404 when the template never existed.',
  },
  getTemplateVersion: {
    summary: 'Get a template version',
    description: 'One frozen version by label (`v3`); also after the template was deleted. 404 when there is no such template or label.',
  },
  createRender: {
    summary: 'Request a render',
    description:
      'Queues a render of a pinned version (default: the latest) in the requested formats and answers 202; poll GET /v1/renders/{id}. 404: unknown template or label. 422: no frozen version yet, or `data` that does not satisfy the fields schema (pointers under /data).',
  },
  listRenders: { summary: 'List renders', description: `The workspace’s renders, newest first, optionally of one template or in one status. ${PAGED}` },
  getRender: {
    summary: 'Get a render',
    description: 'Status (queued, running, resolved, failed) and outputs of one render; 404 when there is none in the workspace.',
  },
  getRenderOutput: {
    summary: 'Download a render output',
    description:
      'The bytes of one output with its content type. 409 while the render is queued or running (with Retry-After) or when it failed; 404 when the render did not ask for this format.',
  },

  // Experiments
  listExperiments: {
    summary: 'List experiments',
    description: `The workspace’s experiments, oldest first (\`order=newest\` for newest first, \`order=updated\` for the most recently changed first), optionally in one \`status\`, whose name or key contains \`q\` (any case), with every \`tag\` given (repeated or comma-separated) and of one \`owner\` (a person’s id or an owner’s name, any case). ${PAGED}`,
  },
  duplicateExperiment: {
    summary: 'Duplicate an experiment',
    description:
      'A new draft with this experiment’s definition under a new key (and name, default "Copy of …"): variants at their starting weights, metrics, decision rule, allocation, audience, dimensions, variance reduction, auto-stop, tags and owner. 409 when the key is taken. Audit-logged as experiment.created with duplicated_from.',
  },
  createExperiment: {
    summary: 'Create an experiment',
    description:
      'Creates a draft. Weights must sum to 100, variant keys be unique, at most one control (the first variant otherwise); environment, metrics, mutex group, segments, the owner (a person’s id) and `template_id` must exist in the workspace. With `template_id`, the template’s fields fill those the body leaves out (unit_type and variants are required of one of the two). Without `owner`, one created from a signed-in admin UI session is owned by the person signed in. Those failures answer 422 with pointers; 409 when the key is taken. Audit-logged (naming the template).',
  },
  getExperiment: {
    summary: 'Get an experiment',
    description: 'One experiment by id, with its variants and decision rule; 404 when there is none in the workspace.',
  },
  updateExperiment: {
    summary: 'Update an experiment',
    description:
      'Any subset of the create body. Drafts change freely; running experiments only name, hypothesis, audience, decision_rule, variance_reduction, dimensions, auto_stop and variant weights (not the set of keys), and a weight change sets `weights_changed_since_start`; stopped and archived ones not at all, except `tags` and `owner`, which change in any status. Those refusals answer 409. Audit-logged.',
  },
  archiveExperiment: {
    summary: 'Archive an experiment',
    description: 'Archives from any status; assign then answers 404 for it (a launch ends). Idempotent; 404 when there is no such experiment. Audit-logged.',
  },
  startExperiment: {
    summary: 'Start an experiment',
    description: 'Moves a draft to running: assignment starts and the background analysis runs on its cadence. 409 when it is not a draft. Audit-logged.',
  },
  stopExperiment: {
    summary: 'Stop an experiment',
    description:
      'Moves a running experiment to stopped with a `reason` (won, lost, inconclusive, bug, business) and optional notes; assignment stops, unless `launch_variant_key` launches a variant in the same step (as POST /v1/experiments/{id}/launch; 422 when the experiment has no such variant, and then nothing changes). 409 when it is not running. Audit-logged.',
  },
  launchExperiment: {
    summary: 'Launch a variant',
    description:
      'On a stopped experiment: from now on assign, assign batch and OFREP answer `variant_key` for every unit of the experiment’s environment and audience with reason `launched` (no sticky row, no exposure), until the experiment is archived. Launching another variant replaces it; units held out by a holdout keep the control. 409 when the experiment is not stopped; 422 when it has no such variant. Audit-logged.',
  },
  // Holdouts (docs/experiments.md)
  ...HOLDOUT_OPERATION_DOCS,
  ...EXPERIMENT_TEMPLATE_OPERATION_DOCS,
  listMutexGroups: {
    summary: 'List mutex groups',
    description: `The workspace’s mutex groups with their count of non-archived experiments, oldest first. ${PAGED}`,
  },
  createMutexGroup: {
    summary: 'Create a mutex group',
    description: 'A set of mutually exclusive experiments: a unit enters at most one of them. 409 when the key is taken. Audit-logged.',
  },
  getMutexGroup: { summary: 'Get a mutex group', description: 'One mutex group by id; 404 when there is none in the workspace.' },

  // Assignment
  assign: {
    summary: 'Assign a unit to a variant',
    description:
      'Sticky assignment: the first call stores the variant (or a mutex holdout, or an audience exclusion) and logs one exposure unless `log_exposure` is false; later calls return the stored result. A QA override answers with reason `forced`. 404 when no experiment with this key is running in the key’s environment; 422 for a context over 4096 bytes.',
  },
  assignBatch: {
    summary: 'Assign a unit in several experiments',
    description:
      'The same sticky assignment for 1 to 50 experiment keys at once; keys with no running experiment are listed in `not_found` instead of failing the request.',
  },
  logExposure: {
    summary: 'Log an exposure',
    description:
      'Logs the exposure of an assignment made with `log_exposure: false`, when the variant is actually shown. Repeats are ignored. 404 when the experiment is not running; 409 when the unit has no assignment or another variant.',
  },
  listUnitAssignments: {
    summary: 'List a unit’s assignments',
    description: 'Every stored assignment of one unit id across the workspace’s experiments, with when its exposure was logged.',
  },
  rebucketUnit: {
    summary: 'Re-bucket a unit (forced)',
    description:
      'Deletes the assignment of a unit in an experiment (given by id or key) and marks the pair’s exposures superseded, so the analysis ignores them; the next assign buckets the unit afresh. It damages that unit’s data: for rare use. 404 when the unit has no assignment. Audit-logged.',
  },
  setOverride: {
    summary: 'Force a unit into a variant (QA)',
    description:
      'Pins a unit to a variant: assign answers it with reason `forced` and logs no exposure, so QA traffic stays out of the analysis. 422 for an unknown variant; 409 when the experiment is archived. Audit-logged.',
  },
  removeOverride: {
    summary: 'Remove a QA override',
    description: 'The unit is bucketed normally again on its next assign. 404 when there is no such experiment or override. Audit-logged.',
  },
  ofrepEvaluateFlag: {
    summary: 'Evaluate one flag (OpenFeature)',
    description:
      'OpenFeature Remote Evaluation: the flag key is the experiment key, `context.targetingKey` the unit id, and the value the variant key, from the same sticky assignment as /v1/assign. Errors use OFREP’s shape: 400 TARGETING_KEY_MISSING or INVALID_CONTEXT, 404 FLAG_NOT_FOUND.',
  },
  ofrepEvaluateAllFlags: {
    summary: 'Evaluate all flags (OpenFeature)',
    description:
      'Evaluates every running experiment visible to the key for `context.targetingKey`, as the OFREP bulk endpoint. 400 TARGETING_KEY_MISSING or INVALID_CONTEXT in OFREP’s shape.',
  },

  // Analysis
  getExperimentResults: {
    summary: 'Latest analysis results',
    description:
      'The latest analysis snapshot: per-variant posteriors, SRM check and the decision rule’s verdict. Reading it through the admin UI session logs a peek (experiment.results_peeked); reading it with an API key does not. 404 when no snapshot was computed yet.',
  },
  getExperimentResultsHistory: {
    summary: 'Analysis history',
    description: 'Every snapshot of the experiment, oldest first, for charting how the credible intervals tighten. 404 when there is no such experiment.',
  },
  computeExperimentResults: {
    summary: 'Compute results now',
    description:
      'Computes and stores a snapshot now, beside the cadence-driven background analysis. 409 when the experiment has not started. Audit-logged (experiment.results_computed).',
  },
  planExperimentPower: {
    summary: 'Plan an experiment’s sample and duration',
    description:
      'Per metric: the units per variant and days the decision rule needs to detect a minimum detectable effect with 80% power (or the MDE reachable in `duration_days`), the MDE reachable and the power by day, ' +
      'from the metric’s history in the environment (the last `history_days`, default 14; CUPED-adjusted with `variance_reduction`) or a given `baseline`, and the traffic from history or `daily_units`. ' +
      'The same formulas as the `underpowered` warning and the snapshots’ `planning` block (docs/statistics.md section 9a). 422 naming the field: weights not summing to 100, an MDE of 0, a metric with no history (give a baseline). Changes nothing.',
  },

  // Webhooks, leads and the task tool
  listWebhookSources: {
    summary: 'List webhook sources',
    description: `The workspace’s inbound webhook sources, oldest first; secrets are never listed. ${PAGED}`,
  },
  createWebhookSource: {
    summary: 'Create a webhook source',
    description:
      'Creates a source and returns its `inbound_secret`, the only time besides a rotation that it is shown. 409 when the slug is taken. Audit-logged (never the secret).',
  },
  listWebhookDeliveries: {
    summary: 'List a source’s deliveries',
    description: `Posts to the source’s inbound URL with their outcome, newest first (kept 30 days). 404 when there is no such source. ${PAGED}`,
  },
  getWebhookSource: { summary: 'Get a webhook source', description: 'One source by id, without its secret; 404 when there is none in the workspace.' },
  updateWebhookSource: {
    summary: 'Update a webhook source',
    description:
      'Changes slug (and so the inbound URL), name or enabled; a disabled source answers 409 to posts. An unchanged body changes nothing and logs nothing. 409 when the slug is taken. Audit-logged.',
  },
  rotateWebhookSourceSecret: {
    summary: 'Rotate a source’s secret',
    description: 'Issues a new `inbound_secret` (returned once); the previous secret keeps verifying for 24 hours. Audit-logged.',
  },
  // Outbound webhooks (docs/webhooks.md "Outbound deliveries")
  listWebhookEndpoints: {
    summary: 'List webhook endpoints',
    description: `The workspace’s outbound endpoints, oldest first, their URLs masked; secrets are never listed. ${PAGED}`,
  },
  createWebhookEndpoint: {
    summary: 'Create a webhook endpoint',
    description:
      'A URL that receives experiment events (`event_types`, or `["*"]`) as signed `verdict` envelopes or as Slack messages (`format: "slack"`, unsigned). Returns the signing `secret` (`whsec_...`) once, and the whole `url` once: it is stored encrypted and shown masked everywhere else. A URL no WHATWG parser accepts answers 422 (pointer `/url`). A URL whose host is, or resolves to, a private, loopback or link-local address is saved with a warning: deliveries to it are refused unless VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1. 409 past VERDICT_WEBHOOK_MAX_ENDPOINTS endpoints (20) in the workspace. Audit-logged (the URL masked).',
  },
  getWebhookEndpoint: {
    summary: 'Get a webhook endpoint',
    description: 'One endpoint by id, its URL masked, without its secret; 404 when there is none in the workspace.',
  },
  updateWebhookEndpoint: {
    summary: 'Update a webhook endpoint',
    description:
      'Changes url, description, event_types, enabled or format; the answer shows the URL masked, and a URL no WHATWG parser accepts answers 422 (pointer `/url`). Setting enabled: true re-enables an endpoint Verdict disabled after three days of failures. An unchanged body changes nothing and logs nothing.',
  },
  deleteWebhookEndpoint: {
    summary: 'Delete a webhook endpoint',
    description: 'Deletes the endpoint and its delivery log; attempts not yet made are not made. Audit-logged.',
  },
  rotateWebhookEndpointSecret: {
    summary: 'Rotate a webhook endpoint’s secret',
    description:
      'Issues a new signing secret (returned once). For 24 hours every delivery carries two `v1=` signatures, one per secret, so a receiver can switch at its own pace. Audit-logged.',
  },
  listWebhookEndpointDeliveries: {
    summary: 'List an endpoint’s deliveries',
    description: `Events sent or being sent to the endpoint, newest first: status, attempts, the last response’s status and first 1 KB, duration, the last error and the next attempt. ${PAGED}`,
  },
  redeliverWebhookEndpointDelivery: {
    summary: 'Redeliver an event',
    description:
      'Sends a finished (succeeded or failed) delivery again now: the same body and event id, with the next attempt number and a new three-day retry window. 409 while an attempt is scheduled or the endpoint is disabled.',
  },
  testWebhookEndpoint: {
    summary: 'Send a test ping',
    description:
      'Sends a `ping` event to this endpoint, whatever its event types, and returns the delivery (202). 409 when the endpoint is disabled. Audit-logged.',
  },
  // Warehouse sources (docs/warehouse.md)
  ...WAREHOUSE_OPERATION_DOCS,
  // People, share links and exports (docs/ui.md)
  ...PEOPLE_OPERATION_DOCS,
  receiveInboundWebhook: {
    summary: 'Receive a signed inbound webhook',
    description:
      'A delivery from a webhook source, authenticated by `X-Service-Signature` (HMAC-SHA256 of `t.body` with the source’s secret; see docs/webhooks.md), not an API key. Events flow into the same pipeline as /v1/events. A repeated Idempotency-Key within 24 hours answers the original 202 with `Idempotent-Replayed: true`. 401 when the signature is missing, wrong, or `t` is more than 5 minutes off; 404 unknown workspace or slug; 409 disabled source or the same key in flight.',
  },
  listLeads: { summary: 'List leads', description: `The workspace’s leads, oldest first. ${PAGED}` },
  createLead: {
    summary: 'Create a lead',
    description:
      'A local record whose status can mirror a task of the task tool. 409 when another lead is linked to the same `task_tool_task_id`. Audit-logged.',
  },
  getLead: { summary: 'Get a lead', description: 'One lead by id; 404 when there is none in the workspace.' },
  updateLead: {
    summary: 'Update a lead',
    description:
      'Changes name, email, status or the linked task (null unlinks). An unchanged body changes nothing and logs nothing. 409 when another lead is linked to that task. Audit-logged.',
  },
  getTaskToolSettings: {
    summary: 'Get task-tool settings',
    description: 'How task-tool status names map onto lead statuses, and until when the previous workspace webhook secret still verifies after a rotation.',
  },
  putTaskToolSettings: {
    summary: 'Replace task-tool settings',
    description: 'Replaces the status mapping; task-tool status names are matched case-insensitively. Audit-logged.',
  },
  rotateWorkspaceWebhookSecret: {
    summary: 'Rotate the workspace webhook secret',
    description: 'Issues a new workspace webhook secret for task-tool callbacks (returned once); the previous one keeps verifying for 24 hours. Audit-logged.',
  },
  receiveTaskToolCallback: {
    summary: 'Receive a task-tool callback',
    description:
      'ClickUp-shaped callback (taskStatusUpdated, taskUpdated, taskDeleted) authenticated by `X-Signature` with the workspace webhook secret, not an API key. Answers 200 once the mirror job is durably enqueued; other event types are acknowledged with `ignored: true`. 401 bad signature; 404 unknown workspace. See docs/webhooks.md.',
  },
};

/** onRoute hook: puts the summary and description of the route's operation into its schema. */
export function describeOperation(route: RouteOptions): void {
  const schema = route.schema as { operationId?: string; hide?: boolean; summary?: string; description?: string } | undefined;
  if (!schema?.operationId || schema.hide) return;
  const doc = OPERATION_DOCS[schema.operationId];
  if (!doc) return;
  const scope = (route.config as { auth?: AuthScope } | undefined)?.auth ?? 'server';
  schema.summary = doc.summary;
  schema.description = `${doc.description}\n\n${CALLERS[scope]}`;
}
