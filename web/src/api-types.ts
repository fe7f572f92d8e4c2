// Generated from openapi.json by scripts/web-types.ts: do not edit. Run `npm run openapi:write`.
/* eslint-disable max-lines -- openapi.json inlines its schemas, so this file is long */

/** components.schemas.Problem */
export type Problem = {
  /** format: uri-reference */
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: Array<{
    /** JSON Pointer into the request body */
    pointer?: string;
    /** query or path parameter */
    parameter?: string;
    message: string;
  }>;
  /** present on 500: the id logged with the error */
  error_id?: string;
  [key: string]: unknown;
};

/** GET /v1/healthz: 200 body */
export type HealthResponse = {
  status: "ok";
  version: string;
};

/** GET /v1/readyz: 200 body */
export type ReadinessResponse = {
  status: "ready" | "unavailable";
  checks: {
    database: {
      status: "ok" | "unavailable";
      latency_ms: number;
      detail?: string;
    };
    buffer: {
      status: "ok" | "unavailable";
      latency_ms: number;
      detail?: string;
    };
  };
};

/** GET /v1/workspaces/current: 200 body */
export type GetCurrentWorkspaceResponse = {
  /** ULID */
  id: string;
  name: string;
  slug: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** GET /v1/environments: 200 body */
export type ListEnvironmentsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    name: string;
    slug: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/environments: request body */
export type CreateEnvironmentRequest = {
  name: string;
  /** lowercase letters, digits and dashes; appears in API keys bound to it. "all" is reserved. */
  slug: string;
};

/** POST /v1/environments: 201 body */
export type CreateEnvironmentResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  name: string;
  slug: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** GET /v1/api-keys: 200 body */
export type ListApiKeysResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** the environment the key is bound to, or null */
    environment_id: string | null;
    name: string;
    /** server keys may call everything; client keys only assign, events, exposures and OFREP */
    kind: "server" | "client";
    /** vd_{srv|clt}_{env} */
    prefix: string;
    last_four: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    last_used_at: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    revoked_at: string | null;
  }>;
  next_cursor: string | null;
};

/** POST /v1/api-keys: request body */
export type CreateApiKeyRequest = {
  name: string;
  /** server keys may call everything; client keys only assign, events, exposures and OFREP */
  kind: "server" | "client";
  /** bind the key to one environment */
  environment_id?: string | null;
};

/** POST /v1/api-keys: 201 body */
export type CreateApiKeyResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** the environment the key is bound to, or null */
  environment_id: string | null;
  name: string;
  /** server keys may call everything; client keys only assign, events, exposures and OFREP */
  kind: "server" | "client";
  /** vd_{srv|clt}_{env} */
  prefix: string;
  last_four: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  last_used_at: string | null;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  revoked_at: string | null;
  /** the full key: shown once, store it now */
  key: string;
};

/** GET /v1/audit: 200 body */
export type ListAuditResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** what happened, e.g. api_key.created */
    action: string;
    target_type: string;
    target_id: string;
    /** the API key or the person that acted; null for the CLI and background jobs */
    actor_id: string | null;
    /** who acted, by name */
    actor: {
      /** user: a person through their admin UI session; api_key: a key (the API, or the UI signed in with a key); system: the CLI and background jobs */
      type: "user" | "api_key" | "system";
      id: string | null;
      /** the person's name (their email before they gave one) or the key's name */
      name: string | null;
      /** a person's email address */
      email: string | null;
    };
    /** what changed; never secrets */
    payload: {
      [key: string]: unknown;
    };
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/events: request body */
export type TrackEventRequest = {
  /** what happened; metrics select events by this key */
  event_key: string;
  /** the unit (user, account, ...) the event belongs to */
  unit_id: string;
  /** free-form; at most 16 KB of JSON and nesting depth at most 8 */
  properties?: {
    [key: string]: unknown;
  };
  /** when it happened (default: when received). 7 to 30 days old: accepted and counted as late; older: 412; more than 5 minutes in the future: 422; format: date-time */
  occurred_at?: string;
  /** de-duplication key, unique per workspace for 30 days */
  client_event_id?: string;
};

/** POST /v1/events: 202 body */
export type TrackEventResponse = {
  accepted: boolean;
  /** true when client_event_id was already seen within 30 days */
  idempotent_replay: boolean;
};

/** POST /v1/events/batch: request body */
export type TrackEventBatchRequest = {
  events: Array<{
    /** what happened; metrics select events by this key */
    event_key: string;
    /** the unit (user, account, ...) the event belongs to */
    unit_id: string;
    /** free-form; at most 16 KB of JSON and nesting depth at most 8 */
    properties?: {
      [key: string]: unknown;
    };
    /** when it happened (default: when received). 7 to 30 days old: accepted and counted as late; older: 412; more than 5 minutes in the future: 422; format: date-time */
    occurred_at?: string;
    /** de-duplication key, unique per workspace for 30 days */
    client_event_id?: string;
  }>;
};

/** POST /v1/events/batch: 202 body */
export type TrackEventBatchResponse = {
  /** events acknowledged, including idempotent replays */
  accepted_count: number;
  /** of those, repeats of a client_event_id seen within 30 days */
  idempotent_replay_count: number;
  rejected: Array<{
    /** position in `events` */
    index: number;
    /** why, with JSON Pointers into the request body */
    reason: string;
  }>;
};

/** GET /v1/events/buffer: 200 body */
export type GetEventBufferStatusResponse = {
  kind: "embedded" | "redis";
  /** acknowledged events not yet in the events table */
  pending: number;
  /** above this, event ingest answers 429 */
  max_pending: number;
};

/** GET /v1/metrics: 200 body */
export type ListMetricsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    key: string;
    name: string;
    description: string | null;
    /** null for ratio metrics */
    event_key: string | null;
    /** binary: did the unit convert; count, revenue, duration: a per-unit number; ratio: sum of a numerator metric over sum of a denominator metric; quantile: the q-quantile of the numbers at property_path; funnel: did the unit complete the steps in order within window; retention: did the unit come back between retention.from and retention.to after its exposure */
    kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
    /** how a unit’s events in its window become one value: count them, or sum / average the number at property_path (ratio metrics: sum) */
    aggregation: "sum" | "mean" | "count";
    higher_is_better: boolean;
    /** winsorization of each unit’s value before the sums; not for binary or ratio metrics */
    capping: {
      /** absolute: each unit’s value is min(value, cap); percentile: the cap is that quantile of the nonzero per-unit values, per snapshot */
      type: "absolute" | "percentile";
      /** absolute: the cap (> 0); percentile: the quantile, strictly between 0.5 and 1 */
      value: number;
    } | null;
    /** ratio metrics: the numerator; null otherwise */
    numerator_metric_id: string | null;
    /** ratio metrics: the denominator; null otherwise */
    denominator_metric_id: string | null;
    /** ISO 8601 duration, as given */
    unit_dedup_window: string;
    property_path: string | null;
    /** the display unit of the values (e.g. ms, USD), or null */
    unit: string | null;
    /** quantile metrics only: q, strictly between 0 and 1 */
    quantile?: number;
    /** quantile metrics: event, over every counted event’s number (units are clusters); unit, over one value per unit (its sum or mean, as aggregation says) */
    quantile_level?: "event" | "unit";
    /** the fact table the metric reads instead of events (docs/warehouse.md), or null */
    fact_table_id: string | null;
    /** metrics on a fact table: the column summed or averaged; null otherwise */
    column: string | null;
    /** metrics on a fact table: the row filter; null for every row */
    filter: string | null;
    /** funnel metrics: the steps in order; null otherwise */
    steps: Array<{
      /** the event that completes the step */
      event_key: string;
      /** only events whose properties meet it count; null or absent for all */
      where?: {
        /** the event property holding the number: dot chains and bracketed string keys, e.g. amount, $.order.total, order["total value"] */
        property_path: string;
        /** eq, neq: the value at property_path equals (does not equal) value, same JSON type; gt, gte, lt, lte: a number compared with value */
        op: "eq" | "neq" | "gt" | "gte" | "lt" | "lte";
        /** a string, number or boolean (a number for gt, gte, lt, lte) */
        value: string | number | boolean;
      } | null;
    }> | null;
    /** funnel metrics: the ISO 8601 duration after the exposure within which every step counts; null otherwise */
    window: string | null;
    /** retention metrics: the window after the exposure; null otherwise */
    retention: {
      /** ISO 8601 duration after the exposure where the window opens (inclusive), PT0S..P365D, e.g. P7D */
      from: string;
      /** ISO 8601 duration after the exposure where the window closes (exclusive), after from and at most P365D, e.g. P14D */
      to: string;
    } | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/metrics: request body */
export type CreateMetricRequest = {
  /** unique in the workspace */
  key: string;
  name: string;
  /** free text for people */
  description?: string | null;
  /** the event_key of the events this metric counts; required except for ratio metrics */
  event_key?: string;
  /** binary: did the unit convert; count, revenue, duration: a per-unit number; ratio: sum of a numerator metric over sum of a denominator metric; quantile: the q-quantile of the numbers at property_path; funnel: did the unit complete the steps in order within window; retention: did the unit come back between retention.from and retention.to after its exposure */
  kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
  /** how a unit’s events in its window become one value: count them, or sum / average the number at property_path (ratio metrics: sum); defaults to count, and to sum for a ratio metric */
  aggregation?: "sum" | "mean" | "count";
  /** false for a metric where lower is better (load time, churn, errors): prob_best, the effect and the decision then favour lower values */
  higher_is_better?: boolean;
  /** winsorization of each unit’s value before the sums; not for binary or ratio metrics */
  capping?: {
    /** absolute: each unit’s value is min(value, cap); percentile: the cap is that quantile of the nonzero per-unit values, per snapshot */
    type: "absolute" | "percentile";
    /** absolute: the cap (> 0); percentile: the quantile, strictly between 0.5 and 1 */
    value: number;
  } | null;
  /** ratio metrics: a non-ratio metric of the workspace */
  numerator_metric_id?: string;
  /** ratio metrics: a non-ratio metric of the workspace */
  denominator_metric_id?: string;
  /** ISO 8601 duration of fixed length (weeks, days, hours, minutes, seconds), PT1S..P365D: e.g. P7D, PT12H, P1DT2H30M, P2W */
  unit_dedup_window?: string;
  /** required by sum and mean; null otherwise */
  property_path?: string | null;
  /** the unit of the metric’s per-unit values, for display (e.g. ms, USD); null for none; not for binary metrics (a rate) */
  unit?: string | null;
  /** quantile metrics: q, strictly between 0 and 1 (0.9 is the 90th percentile, p90) */
  quantile?: number;
  /** quantile metrics: event, over every counted event’s number (units are clusters); unit, over one value per unit (its sum or mean, as aggregation says); defaults to event */
  quantile_level?: "event" | "unit";
  /** a fact table of the workspace the metric reads instead of events (then no event_key or property_path) */
  fact_table_id?: string;
  column?: string | null;
  filter?: string | null;
  /** funnel metrics: 2 to 10 steps, each completed after the previous one */
  steps?: Array<{
    /** the event that completes the step */
    event_key: string;
    /** only events whose properties meet it count; null or absent for all */
    where?: {
      /** the event property holding the number: dot chains and bracketed string keys, e.g. amount, $.order.total, order["total value"] */
      property_path: string;
      /** eq, neq: the value at property_path equals (does not equal) value, same JSON type; gt, gte, lt, lte: a number compared with value */
      op: "eq" | "neq" | "gt" | "gte" | "lt" | "lte";
      /** a string, number or boolean (a number for gt, gte, lt, lte) */
      value: string | number | boolean;
    } | null;
  }>;
  /** funnel metrics: ISO 8601 duration after the exposure within which every step must be completed, PT1S..P365D */
  window?: string;
  retention?: {
    /** ISO 8601 duration after the exposure where the window opens (inclusive), PT0S..P365D, e.g. P7D */
    from: string;
    /** ISO 8601 duration after the exposure where the window closes (exclusive), after from and at most P365D, e.g. P14D */
    to: string;
  };
};

/** POST /v1/metrics: 201 body */
export type CreateMetricResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  key: string;
  name: string;
  description: string | null;
  /** null for ratio metrics */
  event_key: string | null;
  /** binary: did the unit convert; count, revenue, duration: a per-unit number; ratio: sum of a numerator metric over sum of a denominator metric; quantile: the q-quantile of the numbers at property_path; funnel: did the unit complete the steps in order within window; retention: did the unit come back between retention.from and retention.to after its exposure */
  kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
  /** how a unit’s events in its window become one value: count them, or sum / average the number at property_path (ratio metrics: sum) */
  aggregation: "sum" | "mean" | "count";
  higher_is_better: boolean;
  /** winsorization of each unit’s value before the sums; not for binary or ratio metrics */
  capping: {
    /** absolute: each unit’s value is min(value, cap); percentile: the cap is that quantile of the nonzero per-unit values, per snapshot */
    type: "absolute" | "percentile";
    /** absolute: the cap (> 0); percentile: the quantile, strictly between 0.5 and 1 */
    value: number;
  } | null;
  /** ratio metrics: the numerator; null otherwise */
  numerator_metric_id: string | null;
  /** ratio metrics: the denominator; null otherwise */
  denominator_metric_id: string | null;
  /** ISO 8601 duration, as given */
  unit_dedup_window: string;
  property_path: string | null;
  /** the display unit of the values (e.g. ms, USD), or null */
  unit: string | null;
  /** quantile metrics only: q, strictly between 0 and 1 */
  quantile?: number;
  /** quantile metrics: event, over every counted event’s number (units are clusters); unit, over one value per unit (its sum or mean, as aggregation says) */
  quantile_level?: "event" | "unit";
  /** the fact table the metric reads instead of events (docs/warehouse.md), or null */
  fact_table_id: string | null;
  /** metrics on a fact table: the column summed or averaged; null otherwise */
  column: string | null;
  /** metrics on a fact table: the row filter; null for every row */
  filter: string | null;
  /** funnel metrics: the steps in order; null otherwise */
  steps: Array<{
    /** the event that completes the step */
    event_key: string;
    /** only events whose properties meet it count; null or absent for all */
    where?: {
      /** the event property holding the number: dot chains and bracketed string keys, e.g. amount, $.order.total, order["total value"] */
      property_path: string;
      /** eq, neq: the value at property_path equals (does not equal) value, same JSON type; gt, gte, lt, lte: a number compared with value */
      op: "eq" | "neq" | "gt" | "gte" | "lt" | "lte";
      /** a string, number or boolean (a number for gt, gte, lt, lte) */
      value: string | number | boolean;
    } | null;
  }> | null;
  /** funnel metrics: the ISO 8601 duration after the exposure within which every step counts; null otherwise */
  window: string | null;
  /** retention metrics: the window after the exposure; null otherwise */
  retention: {
    /** ISO 8601 duration after the exposure where the window opens (inclusive), PT0S..P365D, e.g. P7D */
    from: string;
    /** ISO 8601 duration after the exposure where the window closes (exclusive), after from and at most P365D, e.g. P14D */
    to: string;
  } | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/metrics/{id}: 200 body */
export type GetMetricResponse = CreateMetricResponse;

/** PATCH /v1/metrics/{id}: request body */
export type UpdateMetricRequest = {
  /** cannot change (experiments and dashboards refer to it); accepted when unchanged */
  key?: string;
  /** cannot change: past snapshots were computed with it; accepted when unchanged */
  kind?: string;
  name?: string;
  /** free text for people */
  description?: string | null;
  higher_is_better?: boolean;
  /** winsorization of each unit’s value before the sums; not for binary or ratio metrics */
  capping?: {
    /** absolute: each unit’s value is min(value, cap); percentile: the cap is that quantile of the nonzero per-unit values, per snapshot */
    type: "absolute" | "percentile";
    /** absolute: the cap (> 0); percentile: the quantile, strictly between 0.5 and 1 */
    value: number;
  } | null;
  property_path?: string | null;
  /** ISO 8601 duration of fixed length, PT1S..P365D */
  unit_dedup_window?: string;
  /** the unit of the metric’s per-unit values, for display (e.g. ms, USD); null for none; not for binary metrics (a rate) */
  unit?: string | null;
  /** metrics on a fact table only */
  column?: string | null;
  /** metrics on a fact table only */
  filter?: string | null;
};

/** PATCH /v1/metrics/{id}: 200 body */
export type UpdateMetricResponse = CreateMetricResponse;

/** GET /v1/segments: 200 body */
export type ListSegmentsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    key: string;
    name: string;
    description: string | null;
    /** AudienceExpression or null (everyone): {operator: and|or|not, operands} | {attribute, op, value} | {segment: key}; see docs/assignment.md */
    rule: unknown;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/segments: request body */
export type CreateSegmentRequest = {
  /** unique in the workspace; audiences refer to the segment by it */
  key: string;
  name: string;
  description?: string | null;
  /** AudienceExpression or null (everyone): {operator: and|or|not, operands} | {attribute, op, value} | {segment: key}; see docs/assignment.md */
  rule: unknown;
};

/** POST /v1/segments: 201 body */
export type CreateSegmentResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  key: string;
  name: string;
  description: string | null;
  /** AudienceExpression or null (everyone): {operator: and|or|not, operands} | {attribute, op, value} | {segment: key}; see docs/assignment.md */
  rule: unknown;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/segments/{id}: 200 body */
export type GetSegmentResponse = CreateSegmentResponse;

/** PATCH /v1/segments/{id}: request body */
export type UpdateSegmentRequest = {
  /** cannot change: audiences refer to the segment by key; accepted when unchanged */
  key?: string;
  name?: string;
  description?: string | null;
  /** AudienceExpression or null (everyone): {operator: and|or|not, operands} | {attribute, op, value} | {segment: key}; see docs/assignment.md */
  rule?: unknown;
};

/** PATCH /v1/segments/{id}: 200 body */
export type UpdateSegmentResponse = CreateSegmentResponse;

/** GET /v1/templates: 200 body */
export type ListTemplatesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    name: string;
    /** the mutable draft */
    body: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
    /** label of the newest frozen version, or null */
    latest_version: string | null;
  }>;
  next_cursor: string | null;
};

/** POST /v1/templates: request body */
export type CreateTemplateRequest = {
  name: string;
  /** Markdown with Handlebars merge fields; checked when saved (syntax, known helpers, inline partials) */
  body: string;
};

/** POST /v1/templates: 201 body */
export type CreateTemplateResponse = {
  /** ULID */
  id: string;
  name: string;
  /** the mutable draft */
  body: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
  /** label of the newest frozen version, or null */
  latest_version: string | null;
};

/** GET /v1/templates/{id}: 200 body */
export type GetTemplateResponse = CreateTemplateResponse;

/** PATCH /v1/templates/{id}: request body */
export type UpdateTemplateRequest = {
  name?: string;
  /** Markdown with Handlebars merge fields; checked when saved (syntax, known helpers, inline partials) */
  body?: string;
};

/** PATCH /v1/templates/{id}: 200 body */
export type UpdateTemplateResponse = CreateTemplateResponse;

/** POST /v1/templates/{id}/versions: 201 body */
export type FreezeTemplateVersionResponse = {
  /** ULID */
  template_id: string;
  /** v1, v2, ... in freeze order */
  label: string;
  /** the body as it was when frozen; never changes */
  body_snapshot: string;
  /** JSON Schema (2020-12) of the merge data, discovered from the body when it was frozen */
  fields_schema: {
    [key: string]: unknown;
  };
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** GET /v1/templates/{id}/versions: 200 body */
export type ListTemplateVersionsResponse = {
  data: Array<{
    /** ULID */
    template_id: string;
    /** v1, v2, ... in freeze order */
    label: string;
    /** the body as it was when frozen; never changes */
    body_snapshot: string;
    /** JSON Schema (2020-12) of the merge data, discovered from the body when it was frozen */
    fields_schema: {
      [key: string]: unknown;
    };
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  }>;
  next_cursor: string | null;
};

/** GET /v1/templates/{id}/versions/{label}: 200 body */
export type GetTemplateVersionResponse = FreezeTemplateVersionResponse;

/** POST /v1/renders: request body */
export type CreateRenderRequest = {
  /** ULID */
  template_id: string;
  /** a label such as v3; default: the latest version. Unknown labels answer 404. */
  version?: string;
  formats: Array<"html" | "text" | "markdown" | "pdf">;
  /** merge values; must satisfy the version's fields_schema */
  data: {
    [key: string]: unknown;
  };
};

/** POST /v1/renders: 202 body */
export type CreateRenderResponse = {
  /** ULID */
  id: string;
  /** ULID */
  template_id: string;
  /** the label the render pinned */
  version: string;
  formats: Array<"html" | "text" | "markdown" | "pdf">;
  /** queued -> running -> resolved | failed */
  status: "queued" | "running" | "resolved" | "failed";
  /** one per format once resolved; empty before */
  outputs: Array<{
    /** an output format */
    format: "html" | "text" | "markdown" | "pdf";
    content_type: string;
    /** size of the output in bytes */
    bytes: number;
    /** where to fetch it (same API key) */
    url: string;
  }>;
  /** why it failed, when status is failed */
  error: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** when it became resolved or failed */
  resolved_at: string | null;
};

/** GET /v1/renders: 200 body */
export type ListRendersResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    template_id: string;
    /** the label the render pinned */
    version: string;
    formats: Array<"html" | "text" | "markdown" | "pdf">;
    /** queued -> running -> resolved | failed */
    status: "queued" | "running" | "resolved" | "failed";
    /** one per format once resolved; empty before */
    outputs: Array<{
      /** an output format */
      format: "html" | "text" | "markdown" | "pdf";
      content_type: string;
      /** size of the output in bytes */
      bytes: number;
      /** where to fetch it (same API key) */
      url: string;
    }>;
    /** why it failed, when status is failed */
    error: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** when it became resolved or failed */
    resolved_at: string | null;
  }>;
  next_cursor: string | null;
};

/** GET /v1/renders/{id}: 200 body */
export type GetRenderResponse = CreateRenderResponse;

/** GET /v1/experiments: 200 body */
export type ListExperimentsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** ULID */
    environment_id: string;
    key: string;
    name: string;
    hypothesis: string;
    /** what a unit id identifies */
    unit_type: "user" | "account" | "session" | "device" | "custom_attribute";
    status: "draft" | "running" | "stopped" | "archived";
    variants: Array<{
      /** ULID */
      id: string;
      key: string;
      weight: number;
      is_control: boolean;
      description?: string;
    }>;
    /** audience expression tree (see docs/assignment.md), or null for everyone */
    audience: {
      [key: string]: unknown;
    } | null;
    decision_rule: {
      method: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
      posterior_threshold: number;
      minimum_detectable_effect: number;
      min_sample_per_variant: number;
      max_duration_days: number;
      snapshot_cadence_minutes: number;
    };
    primary_metric_id: string | null;
    guardrail_metric_ids: Array<string>;
    /** goal metrics beside the primary */
    secondary_metric_ids: Array<string>;
    /** the correction applied to each non-control variant’s p-value over the family (docs/statistics.md "Multiple testing") */
    multiple_testing: {
      method: "none" | "holm" | "benjamini_hochberg";
      scope: "goals" | "goals_and_guardrails";
    };
    mutex_group_id: string | null;
    /** CUPED variance reduction with its lookback, or null when off */
    variance_reduction: {
      method: "cuped";
      lookback_days: number;
    } | null;
    /** attribute names whose values from the first assignment break the results down */
    dimensions: Array<string>;
    /** how traffic is split: fixed weights, or a bandit with every setting filled in */
    allocation: {
      type: "fixed";
    } | {
      type: "bandit";
      /** hours at the starting weights before the first update (default 24) */
      burn_in_hours: number;
      /** minutes between weight updates (default 60, at least 15) */
      update_every_minutes: number;
      /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
      min_units_per_variant: number;
      /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
      weight_floor: number;
      /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
      stop_at_prob_best: number;
    };
    /** a bandit’s weight splits, oldest first, from its start; empty for a fixed allocation or a bandit not started */
    allocation_periods: Array<{
      /** ISO 8601 UTC with milliseconds; format: date-time */
      started_at: string;
      /** variant key -> percent of new units during the period */
      weights: {
        [key: string]: number;
      };
      /** the seed of the Thompson draws that set these weights; null for the starting weights */
      seed: number | null;
    }>;
    /** which conditions stop the experiment automatically, in the transaction that stores the snapshot that meets them */
    auto_stop: {
      on_recommendation: boolean;
      on_guardrail_regression: boolean;
      on_srm: boolean;
    };
    /** tags, in lower case */
    tags: Array<string>;
    /** who owns it, or null for nobody */
    owner: {
      /** the person’s id, or null when the owner is a name given as text */
      user_id: string | null;
      /** the person’s name (as when set as owner), or the text given */
      name: string;
    } | null;
    /** the assignment source of an analysis-only experiment (assigned elsewhere), or null for one Verdict assigns */
    assignment_source_id: string | null;
    /** its key in the assignment source when not `key` */
    assignment_experiment_key: string | null;
    weights_changed_since_start: boolean;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    started_at: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    stopped_at: string | null;
    stop_reason: "won" | "lost" | "inconclusive" | "bug" | "business" | null;
    outcome_notes: string | null;
    /** who stopped it: key (an API key), person (through the admin UI) or auto (an auto_stop condition; see stop_snapshot_id); null while not stopped, and for experiments stopped before Verdict recorded it */
    stopped_by: "key" | "person" | "auto" | null;
    /** the snapshot that stopped it, when stopped_by is auto (GET /v1/experiments/{id}/results/history lists it); else null */
    stop_snapshot_id: string | null;
    /** the variant a stopped experiment keeps serving to every unit (reason launched) until it is archived; null when none was launched */
    launched_variant_key: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    launched_at: string | null;
    /** why the variant was launched, as given; null when none was given */
    launch_reason: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
    /** planning warnings computed from the current settings (e.g. underpowered); empty when none */
    warnings: Array<{
      /** stable, machine-readable */
      code: "underpowered";
      /** for a person: what is wrong, the estimate, what to do */
      message: string;
      /** units each variant needs for the rule to detect a lift of minimum_detectable_effect with 80% power; null above a billion */
      estimated_units_per_variant: number | null;
      min_sample_per_variant: number;
      /** the power the estimate is for */
      power: number;
      /** the conversion rate the estimate assumes (0.1) when the primary metric has no history in the environment; null when the estimate is from its history */
      assumed_baseline_rate: number | null;
      /** history: the primary metric’s last 14 days in the environment */
      baseline_source?: "history" | "assumed";
      /** the per-unit mean the estimate is for (the conversion rate of a binary metric) */
      baseline_mean?: number;
    }>;
  }>;
  next_cursor: string | null;
};

/** POST /v1/experiments: request body */
export type CreateExperimentRequest = {
  /** ULID */
  environment_id: string;
  key: string;
  name: string;
  hypothesis: string;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  variants?: Array<{
    key: string;
    /** percent of traffic; all weights sum to 100 */
    weight: number;
    description?: string;
    is_control?: boolean;
  }>;
  /** audience expression tree (see docs/assignment.md), or null for everyone */
  audience?: {
    [key: string]: unknown;
  } | null;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  primary_metric_id?: string | null;
  guardrail_metric_ids?: Array<string>;
  /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
  secondary_metric_ids?: Array<string>;
  /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
  multiple_testing?: {
    /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
    method?: "none" | "holm" | "benjamini_hochberg";
    /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
    scope?: "goals" | "goals_and_guardrails";
  };
  mutex_group_id?: string | null;
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
  dimensions?: Array<string>;
  /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
  allocation?: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours?: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes?: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant?: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor?: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best?: number;
  };
  /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
  auto_stop?: {
    /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
    on_recommendation?: boolean;
    /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
    on_guardrail_regression?: boolean;
    /** stop (reason bug) when a sample-ratio mismatch is detected */
    on_srm?: boolean;
  };
  /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
  tags?: Array<string>;
  /** who owns it: a person’s id (GET /v1/users), or a name as free text; null for nobody. Created from a signed-in admin UI session without one, the person signed in. */
  owner?: string | null;
  /** an assignment source of the workspace (GET /v1/assignment-sources): the experiment is assigned elsewhere and analysis-only; Verdict does not assign it, and its exposures are read from the source at each snapshot */
  assignment_source_id?: string | null;
  /** the experiment’s key in the assignment source when it differs from `key` */
  assignment_experiment_key?: string | null;
  /** an experiment template of the workspace (GET /v1/experiment-templates) whose fields fill those this body leaves out; unit_type and variants are required without one that has them */
  template_id?: string;
};

/** POST /v1/experiments: 201 body */
export type CreateExperimentResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** ULID */
  environment_id: string;
  key: string;
  name: string;
  hypothesis: string;
  /** what a unit id identifies */
  unit_type: "user" | "account" | "session" | "device" | "custom_attribute";
  status: "draft" | "running" | "stopped" | "archived";
  variants: Array<{
    /** ULID */
    id: string;
    key: string;
    weight: number;
    is_control: boolean;
    description?: string;
  }>;
  /** audience expression tree (see docs/assignment.md), or null for everyone */
  audience: {
    [key: string]: unknown;
  } | null;
  decision_rule: {
    method: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold: number;
    minimum_detectable_effect: number;
    min_sample_per_variant: number;
    max_duration_days: number;
    snapshot_cadence_minutes: number;
  };
  primary_metric_id: string | null;
  guardrail_metric_ids: Array<string>;
  /** goal metrics beside the primary */
  secondary_metric_ids: Array<string>;
  /** the correction applied to each non-control variant’s p-value over the family (docs/statistics.md "Multiple testing") */
  multiple_testing: {
    method: "none" | "holm" | "benjamini_hochberg";
    scope: "goals" | "goals_and_guardrails";
  };
  mutex_group_id: string | null;
  /** CUPED variance reduction with its lookback, or null when off */
  variance_reduction: {
    method: "cuped";
    lookback_days: number;
  } | null;
  /** attribute names whose values from the first assignment break the results down */
  dimensions: Array<string>;
  /** how traffic is split: fixed weights, or a bandit with every setting filled in */
  allocation: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best: number;
  };
  /** a bandit’s weight splits, oldest first, from its start; empty for a fixed allocation or a bandit not started */
  allocation_periods: Array<{
    /** ISO 8601 UTC with milliseconds; format: date-time */
    started_at: string;
    /** variant key -> percent of new units during the period */
    weights: {
      [key: string]: number;
    };
    /** the seed of the Thompson draws that set these weights; null for the starting weights */
    seed: number | null;
  }>;
  /** which conditions stop the experiment automatically, in the transaction that stores the snapshot that meets them */
  auto_stop: {
    on_recommendation: boolean;
    on_guardrail_regression: boolean;
    on_srm: boolean;
  };
  /** tags, in lower case */
  tags: Array<string>;
  /** who owns it, or null for nobody */
  owner: {
    /** the person’s id, or null when the owner is a name given as text */
    user_id: string | null;
    /** the person’s name (as when set as owner), or the text given */
    name: string;
  } | null;
  /** the assignment source of an analysis-only experiment (assigned elsewhere), or null for one Verdict assigns */
  assignment_source_id: string | null;
  /** its key in the assignment source when not `key` */
  assignment_experiment_key: string | null;
  weights_changed_since_start: boolean;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  started_at: string | null;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  stopped_at: string | null;
  stop_reason: "won" | "lost" | "inconclusive" | "bug" | "business" | null;
  outcome_notes: string | null;
  /** who stopped it: key (an API key), person (through the admin UI) or auto (an auto_stop condition; see stop_snapshot_id); null while not stopped, and for experiments stopped before Verdict recorded it */
  stopped_by: "key" | "person" | "auto" | null;
  /** the snapshot that stopped it, when stopped_by is auto (GET /v1/experiments/{id}/results/history lists it); else null */
  stop_snapshot_id: string | null;
  /** the variant a stopped experiment keeps serving to every unit (reason launched) until it is archived; null when none was launched */
  launched_variant_key: string | null;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  launched_at: string | null;
  /** why the variant was launched, as given; null when none was given */
  launch_reason: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
  /** planning warnings computed from the current settings (e.g. underpowered); empty when none */
  warnings: Array<{
    /** stable, machine-readable */
    code: "underpowered";
    /** for a person: what is wrong, the estimate, what to do */
    message: string;
    /** units each variant needs for the rule to detect a lift of minimum_detectable_effect with 80% power; null above a billion */
    estimated_units_per_variant: number | null;
    min_sample_per_variant: number;
    /** the power the estimate is for */
    power: number;
    /** the conversion rate the estimate assumes (0.1) when the primary metric has no history in the environment; null when the estimate is from its history */
    assumed_baseline_rate: number | null;
    /** history: the primary metric’s last 14 days in the environment */
    baseline_source?: "history" | "assumed";
    /** the per-unit mean the estimate is for (the conversion rate of a binary metric) */
    baseline_mean?: number;
  }>;
};

/** POST /v1/experiments/{id}/duplicate: request body */
export type DuplicateExperimentRequest = {
  /** the new experiment’s key (keys are unique in the workspace) */
  key: string;
  /** default: "Copy of" and the name */
  name?: string;
};

/** POST /v1/experiments/{id}/duplicate: 201 body */
export type DuplicateExperimentResponse = CreateExperimentResponse;

/** GET /v1/experiments/{id}: 200 body */
export type GetExperimentResponse = CreateExperimentResponse;

/** PATCH /v1/experiments/{id}: request body */
export type UpdateExperimentRequest = {
  /** ULID */
  environment_id?: string;
  key?: string;
  name?: string;
  hypothesis?: string;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  variants?: Array<{
    key: string;
    /** percent of traffic; all weights sum to 100 */
    weight: number;
    description?: string;
    is_control?: boolean;
  }>;
  /** audience expression tree (see docs/assignment.md), or null for everyone */
  audience?: {
    [key: string]: unknown;
  } | null;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  primary_metric_id?: string | null;
  guardrail_metric_ids?: Array<string>;
  /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
  secondary_metric_ids?: Array<string>;
  /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
  multiple_testing?: {
    /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
    method?: "none" | "holm" | "benjamini_hochberg";
    /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
    scope?: "goals" | "goals_and_guardrails";
  };
  mutex_group_id?: string | null;
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
  dimensions?: Array<string>;
  /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
  allocation?: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours?: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes?: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant?: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor?: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best?: number;
  };
  /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
  auto_stop?: {
    /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
    on_recommendation?: boolean;
    /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
    on_guardrail_regression?: boolean;
    /** stop (reason bug) when a sample-ratio mismatch is detected */
    on_srm?: boolean;
  };
  /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
  tags?: Array<string>;
  /** who owns it: a person’s id (GET /v1/users), or a name as free text; null for nobody. Created from a signed-in admin UI session without one, the person signed in. */
  owner?: string | null;
  /** an assignment source of the workspace (GET /v1/assignment-sources): the experiment is assigned elsewhere and analysis-only; Verdict does not assign it, and its exposures are read from the source at each snapshot */
  assignment_source_id?: string | null;
  /** the experiment’s key in the assignment source when it differs from `key` */
  assignment_experiment_key?: string | null;
};

/** PATCH /v1/experiments/{id}: 200 body */
export type UpdateExperimentResponse = CreateExperimentResponse;

/** POST /v1/experiments/{id}/start: 200 body */
export type StartExperimentResponse = CreateExperimentResponse;

/** POST /v1/experiments/{id}/stop: request body */
export type StopExperimentRequest = {
  reason: "won" | "lost" | "inconclusive" | "bug" | "business";
  outcome_notes?: string;
  /** launch this variant in the same step (POST /v1/experiments/{id}/launch); 422 when the experiment has no such variant */
  launch_variant_key?: string;
};

/** POST /v1/experiments/{id}/stop: 200 body */
export type StopExperimentResponse = CreateExperimentResponse;

/** POST /v1/experiments/{id}/launch: request body */
export type LaunchExperimentRequest = {
  /** the variant every unit gets from now on; one of the experiment’s variants */
  variant_key: string;
  /** why it is launched (kept with the experiment and in the audit log) */
  reason?: string;
};

/** POST /v1/experiments/{id}/launch: 200 body */
export type LaunchExperimentResponse = CreateExperimentResponse;

/** GET /v1/experiment-templates: 200 body */
export type ListExperimentTemplatesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    name: string;
    description: string | null;
    /** what a unit id identifies */
    unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
    variants?: Array<{
      key: string;
      /** percent of traffic; all weights sum to 100 */
      weight: number;
      description?: string;
      is_control?: boolean;
    }>;
    /** every field optional; defaults fill the rest */
    decision_rule?: {
      method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
      posterior_threshold?: number;
      /** relative to the control mean */
      minimum_detectable_effect?: number;
      min_sample_per_variant?: number;
      max_duration_days?: number;
      snapshot_cadence_minutes?: number;
    };
    primary_metric_id?: string | null;
    guardrail_metric_ids?: Array<string>;
    /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
    secondary_metric_ids?: Array<string>;
    /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
    multiple_testing?: {
      /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
      method?: "none" | "holm" | "benjamini_hochberg";
      /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
      scope?: "goals" | "goals_and_guardrails";
    };
    /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
    allocation?: {
      type: "fixed";
    } | {
      type: "bandit";
      /** hours at the starting weights before the first update (default 24) */
      burn_in_hours?: number;
      /** minutes between weight updates (default 60, at least 15) */
      update_every_minutes?: number;
      /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
      min_units_per_variant?: number;
      /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
      weight_floor?: number;
      /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
      stop_at_prob_best?: number;
    };
    /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
    auto_stop?: {
      /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
      on_recommendation?: boolean;
      /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
      on_guardrail_regression?: boolean;
      /** stop (reason bug) when a sample-ratio mismatch is detected */
      on_srm?: boolean;
    };
    /** CUPED variance reduction (docs/statistics.md), or null for none */
    variance_reduction?: {
      method: "cuped";
      /** days before each unit’s first exposure whose events form its pre-period covariate */
      lookback_days?: number;
    } | null;
    /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
    dimensions?: Array<string>;
    /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
    tags?: Array<string>;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/experiment-templates: request body */
export type CreateExperimentTemplateRequest = {
  name: string;
  description?: string | null;
  /** start from this experiment of the workspace: its unit type, variants (at their starting weights), metrics, rule, allocation, auto-stop, variance reduction, dimensions and tags; fields of this body replace its */
  from_experiment_id?: string;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  variants?: Array<{
    key: string;
    /** percent of traffic; all weights sum to 100 */
    weight: number;
    description?: string;
    is_control?: boolean;
  }>;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  primary_metric_id?: string | null;
  guardrail_metric_ids?: Array<string>;
  /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
  secondary_metric_ids?: Array<string>;
  /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
  multiple_testing?: {
    /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
    method?: "none" | "holm" | "benjamini_hochberg";
    /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
    scope?: "goals" | "goals_and_guardrails";
  };
  /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
  allocation?: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours?: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes?: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant?: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor?: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best?: number;
  };
  /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
  auto_stop?: {
    /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
    on_recommendation?: boolean;
    /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
    on_guardrail_regression?: boolean;
    /** stop (reason bug) when a sample-ratio mismatch is detected */
    on_srm?: boolean;
  };
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
  dimensions?: Array<string>;
  /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
  tags?: Array<string>;
};

/** POST /v1/experiment-templates: 201 body */
export type CreateExperimentTemplateResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  name: string;
  description: string | null;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  variants?: Array<{
    key: string;
    /** percent of traffic; all weights sum to 100 */
    weight: number;
    description?: string;
    is_control?: boolean;
  }>;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  primary_metric_id?: string | null;
  guardrail_metric_ids?: Array<string>;
  /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
  secondary_metric_ids?: Array<string>;
  /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
  multiple_testing?: {
    /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
    method?: "none" | "holm" | "benjamini_hochberg";
    /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
    scope?: "goals" | "goals_and_guardrails";
  };
  /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
  allocation?: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours?: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes?: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant?: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor?: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best?: number;
  };
  /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
  auto_stop?: {
    /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
    on_recommendation?: boolean;
    /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
    on_guardrail_regression?: boolean;
    /** stop (reason bug) when a sample-ratio mismatch is detected */
    on_srm?: boolean;
  };
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
  dimensions?: Array<string>;
  /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
  tags?: Array<string>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/experiment-templates/{id}: 200 body */
export type GetExperimentTemplateResponse = CreateExperimentTemplateResponse;

/** PATCH /v1/experiment-templates/{id}: request body */
export type UpdateExperimentTemplateRequest = {
  name?: string;
  description?: string | null;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  variants?: Array<{
    key: string;
    /** percent of traffic; all weights sum to 100 */
    weight: number;
    description?: string;
    is_control?: boolean;
  }>;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  primary_metric_id?: string | null;
  guardrail_metric_ids?: Array<string>;
  /** goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail) */
  secondary_metric_ids?: Array<string>;
  /** how goal p-values are adjusted for being read at once; omitted fields take their defaults */
  multiple_testing?: {
    /** benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values */
    method?: "none" | "holm" | "benjamini_hochberg";
    /** goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family */
    scope?: "goals" | "goals_and_guardrails";
  };
  /** fixed weights (the default), or a Thompson-sampling bandit with its settings; every bandit field is optional */
  allocation?: {
    type: "fixed";
  } | {
    type: "bandit";
    /** hours at the starting weights before the first update (default 24) */
    burn_in_hours?: number;
    /** minutes between weight updates (default 60, at least 15) */
    update_every_minutes?: number;
    /** no update until every variant has this many exposed units (default 100, at most 1000000000) */
    min_units_per_variant?: number;
    /** each variant keeps at least this share, in [0, 1/K) for K variants (default 0.01) */
    weight_floor?: number;
    /** the decision names a winner once a variant’s prob_best reaches this (default 0.95; a bandit’s stopping rule, not an always-valid one) */
    stop_at_prob_best?: number;
  };
  /** automatic stops; omitted switches are off (docs/experiments.md "Auto-stop") */
  auto_stop?: {
    /** stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule */
    on_recommendation?: boolean;
    /** stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units */
    on_guardrail_regression?: boolean;
    /** stop (reason bug) when a sample-ratio mismatch is detected */
    on_srm?: boolean;
  };
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards. */
  dimensions?: Array<string>;
  /** at most 10 tags of at most 32 characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case */
  tags?: Array<string>;
};

/** PATCH /v1/experiment-templates/{id}: 200 body */
export type UpdateExperimentTemplateResponse = CreateExperimentTemplateResponse;

/** GET /v1/mutex-groups: 200 body */
export type ListMutexGroupsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
    /** experiments in the group that are not archived */
    experiment_count: number;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/mutex-groups: request body */
export type CreateMutexGroupRequest = {
  key: string;
  name: string;
};

/** POST /v1/mutex-groups: 201 body */
export type CreateMutexGroupResponse = {
  /** ULID */
  id: string;
  key: string;
  name: string;
  /** experiments in the group that are not archived */
  experiment_count: number;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** GET /v1/mutex-groups/{id}: 200 body */
export type GetMutexGroupResponse = CreateMutexGroupResponse;

/** GET /v1/holdouts: 200 body */
export type ListHoldoutsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** ULID */
    environment_id: string;
    name: string;
    description: string | null;
    /** what a unit id identifies */
    unit_type: "user" | "account" | "session" | "device" | "custom_attribute";
    percent: number;
    /** started_after: every experiment started in the environment after the holdout; listed: experiment_ids */
    coverage: "started_after" | "listed";
    experiment_ids: Array<string> | null;
    /** the metrics its snapshots analyse */
    metric_ids: Array<string>;
    /** CUPED variance reduction with its lookback, or null when off */
    variance_reduction: {
      method: "cuped";
      lookback_days: number;
    } | null;
    status: "draft" | "running" | "ended" | "archived";
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    started_at: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    ended_at: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/holdouts: request body */
export type CreateHoldoutRequest = {
  /** ULID */
  environment_id: string;
  name: string;
  description?: string | null;
  /** what a unit id identifies */
  unit_type: "user" | "account" | "session" | "device" | "custom_attribute";
  /** percent of the environment’s units held out, 0.5 to 20, in steps of 0.01 (a unit is held out when its bucket of 10,000 is below percent × 100) */
  percent: number;
  experiment_ids?: Array<string> | null;
  /** the metrics the holdout’s snapshots analyse (held-out units against the equal-size sample); each metric’s window must fit in the holdout’s run */
  metric_ids?: Array<string>;
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
};

/** POST /v1/holdouts: 201 body */
export type CreateHoldoutResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** ULID */
  environment_id: string;
  name: string;
  description: string | null;
  /** what a unit id identifies */
  unit_type: "user" | "account" | "session" | "device" | "custom_attribute";
  percent: number;
  /** started_after: every experiment started in the environment after the holdout; listed: experiment_ids */
  coverage: "started_after" | "listed";
  experiment_ids: Array<string> | null;
  /** the metrics its snapshots analyse */
  metric_ids: Array<string>;
  /** CUPED variance reduction with its lookback, or null when off */
  variance_reduction: {
    method: "cuped";
    lookback_days: number;
  } | null;
  status: "draft" | "running" | "ended" | "archived";
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  started_at: string | null;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  ended_at: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/holdouts/{id}: 200 body */
export type GetHoldoutResponse = CreateHoldoutResponse;

/** PATCH /v1/holdouts/{id}: request body */
export type UpdateHoldoutRequest = {
  /** ULID */
  environment_id?: string;
  name?: string;
  description?: string | null;
  /** what a unit id identifies */
  unit_type?: "user" | "account" | "session" | "device" | "custom_attribute";
  /** percent of the environment’s units held out, 0.5 to 20, in steps of 0.01 (a unit is held out when its bucket of 10,000 is below percent × 100) */
  percent?: number;
  experiment_ids?: Array<string> | null;
  /** the metrics the holdout’s snapshots analyse (held-out units against the equal-size sample); each metric’s window must fit in the holdout’s run */
  metric_ids?: Array<string>;
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
};

/** PATCH /v1/holdouts/{id}: 200 body */
export type UpdateHoldoutResponse = CreateHoldoutResponse;

/** GET /v1/holdouts/{id}/experiments: 200 body */
export type ListHoldoutExperimentsResponse = {
  /** experiments the holdout covers (archived ones included), by start date */
  covered: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
    status: string;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    started_at: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    stopped_at: string | null;
    launched_variant_key: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    launched_at: string | null;
  }>;
  /** experiments it would cover but that opted out */
  opted_out: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
    reason: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    opted_out_at: string;
  }>;
};

/** POST /v1/holdouts/{id}/start: 200 body */
export type StartHoldoutResponse = CreateHoldoutResponse;

/** POST /v1/holdouts/{id}/end: 200 body */
export type EndHoldoutResponse = CreateHoldoutResponse;

/** POST /v1/holdouts/{id}/archive: 200 body */
export type ArchiveHoldoutResponse = CreateHoldoutResponse;

/** GET /v1/experiments/{id}/holdouts: 200 body */
export type GetExperimentHoldoutsResponse = {
  /** the running holdouts that keep their units on this experiment’s control */
  holdouts: Array<{
    /** ULID */
    id: string;
    name: string;
    percent: number;
    status: "draft" | "running" | "ended" | "archived";
  }>;
  opt_out: {
    reason: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  } | null;
};

/** PUT /v1/experiments/{id}/holdout-opt-out: request body */
export type OptOutOfHoldoutsRequest = {
  /** why this experiment must reach held-out units too */
  reason: string;
};

/** PUT /v1/experiments/{id}/holdout-opt-out: 200 body */
export type OptOutOfHoldoutsResponse = {
  reason: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** GET /v1/holdouts/{id}/results: 200 body */
export type GetHoldoutResultsResponse = {
  /** ULID */
  id: string;
  /** ULID */
  holdout_id: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  computed_at: string;
  /** the holdout’s run analysed: from its start to its end, or to the computation while it runs; events outside count nowhere */
  period: {
    /** ISO 8601 UTC with milliseconds; format: date-time */
    from: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    to: string;
  };
  /** the holdout’s percentage when computed */
  percent: number;
  groups: Array<{
    /** held_out: the holdout’s units (the control); sample: the equal-size sample of everyone else */
    key: "held_out" | "sample";
    /** units of the group with a first contact in the holdout’s run */
    units: number;
    /** the share of all units the group should hold (the SRM check’s weight) */
    expected_share: number;
  }>;
  /** p-value of the chi-squared test of the group sizes against their expected shares */
  srm_chi_squared_p: number | null;
  /** true when srm_chi_squared_p < 0.001 */
  srm_warning: boolean;
  /** the holdout’s metric_ids, in order */
  metrics: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
    unit: string | null;
    kind: string;
    aggregation: string;
    higher_is_better: boolean;
    /** the metric’s window after each unit’s first contact (shorter than the holdout’s run) */
    window_days: number;
    /** the absolute cap each unit’s value was held to; null when uncapped (a percentile cap is not applied to a holdout) */
    cap_applied: number | null;
    /** null when the holdout’s variance_reduction is off */
    cuped: {
      /** whether this metric’s posterior, effects and decision use the adjusted statistics */
      applied: boolean;
      /** the pre-period before each unit’s first exposure */
      lookback_days: number;
      /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
      theta: number | null;
      /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
      variance_reduction: number | null;
      /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
      note: string | null;
    } | null;
    /** held_out (the control) first, then sample */
    per_group: Array<{
      variant_key: string;
      is_control: boolean;
      /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
      sample_size: number;
      /** units with at least one counted event in their window (binary metrics: converted units) */
      conversions: number;
      /** observed per-unit mean (binary: conversion rate); null without a metric */
      observed_rate: number | null;
      posterior: {
        /** posterior mean of the per-unit value; null without a metric */
        mean: number | null;
        /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
        credible_interval_95: [number, number] | null;
      };
      /** probability that this variant has the highest true value; null when undefined */
      prob_best: number | null;
      /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
      expected_loss_if_stop_now: number | null;
      /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
      effect: {
        absolute: {
          /** posterior mean of (variant mean - control mean) */
          mean: number;
          /** 2.5% and 97.5% posterior quantiles of the difference */
          credible_interval_95: [number, number];
        };
        relative: {
          /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
          mean: number | null;
          /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
          credible_interval_95: [number, number] | null;
        };
        /** P(variant better than control) in the metric’s direction */
        chance_to_beat_control: number;
        /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
        p_value?: number;
        /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
        adjusted_p_value?: number | null;
        /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
        adjusted_interval_95?: {
          absolute: [number, number];
          relative: [number, number] | null;
        } | null;
      } | null;
      /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
      quantile?: {
        /** the quantile (0 < q < 1) */
        q: number;
        level: "event" | "unit";
        /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
        value: number | null;
        /** values it was taken over: events at the event level, units at the unit level */
        values: number;
        /** units contributing a value (the clusters at the event level) */
        units: number;
        /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
        interval_95: [number, number] | null;
        /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
        standard_error: number | null;
      };
      /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
      steps?: Array<{
        /** the step’s event */
        event_key: string;
        /** units that completed this step and every one before it, in order, within the window */
        conversions: number;
        /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
        rate: number | null;
        /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
        rate_interval_95: [number, number] | null;
        /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
        step_rate: number | null;
        /** the same Beta posterior interval for step_rate; null when none reached the previous step */
        step_rate_interval_95: [number, number] | null;
      }>;
      /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
      pending_units?: number;
    }>;
    /** the sample against the held-out units: what everything launched while the holdout ran added up to; null while a group has too few units */
    cumulative_lift: {
      absolute: {
        /** posterior mean of (variant mean - control mean) */
        mean: number;
        /** 2.5% and 97.5% posterior quantiles of the difference */
        credible_interval_95: [number, number];
      };
      relative: {
        /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
        mean: number | null;
        /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
        credible_interval_95: [number, number] | null;
      };
      /** P(variant better than control) in the metric’s direction */
      chance_to_beat_control: number;
      /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
      p_value?: number;
      /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
      adjusted_p_value?: number | null;
      /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
      adjusted_interval_95?: {
        absolute: [number, number];
        relative: [number, number] | null;
      } | null;
    } | null;
  }>;
  /** the correction the adjusted_p_value fields carry (docs/statistics.md "Multiple testing") */
  multiple_testing: {
    method: "none" | "holm" | "benjamini_hochberg";
    scope: "goals" | "goals_and_guardrails";
    /** p-values adjusted together: metrics in scope times non-control variants with an effect */
    family_size: number;
  };
  /** the experiments the holdout covers, by start date */
  covered_experiments: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
    status: string;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    started_at: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    stopped_at: string | null;
    launched_variant_key: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    launched_at: string | null;
  }>;
  /** launches of covered experiments while the holdout ran, oldest first: what cumulative_lift measures */
  launches: Array<{
    /** ULID */
    experiment_id: string;
    experiment_key: string;
    variant_key: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    launched_at: string;
  }>;
  computation: {
    store: string;
    events_read: number;
    duration_ms: number;
  };
};

/** POST /v1/holdouts/{id}/results/compute: 201 body */
export type ComputeHoldoutResultsResponse = GetHoldoutResultsResponse;

/** POST /v1/assign: request body */
export type AssignRequest = {
  experiment_key: string;
  /** the unit being assigned (user id, account id, ...) */
  unit_id: string;
  /** attributes for audience targeting; at most 4 KB of JSON */
  context?: {
    [key: string]: unknown;
  };
  /** log the exposure now (default); send false when the variant is shown later, then POST /v1/exposures */
  log_exposure?: boolean;
};

/** POST /v1/assign: 200 body */
export type AssignResponse = {
  experiment_key: string;
  unit_id: string;
  /** null for a mutex holdout or an excluded unit */
  variant: string | null;
  /** bucketed: stored by hashing; forced: a QA override; mutex_holdout: claimed by another experiment of its mutex group; audience_excluded: outside the audience; launched: the variant a stopped experiment launched; holdout: held out by a holdout (the control) */
  reason: "bucketed" | "forced" | "mutex_holdout" | "audience_excluded" | "launched" | "holdout";
  /** present when the assignment is stored (sticky) */
  assignment_id?: string;
  /** with reason holdout: the holdout that keeps the unit on the control */
  holdout_id?: string;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  exposure_logged_at?: string | null;
};

/** POST /v1/assign/batch: request body */
export type AssignBatchRequest = {
  experiments: Array<string>;
  /** the unit being assigned (user id, account id, ...) */
  unit_id: string;
  /** attributes for audience targeting; at most 4 KB of JSON */
  context?: {
    [key: string]: unknown;
  };
  /** log the exposure now (default); send false when the variant is shown later, then POST /v1/exposures */
  log_exposure?: boolean;
};

/** POST /v1/assign/batch: 200 body */
export type AssignBatchResponse = {
  assignments: {
    [key: string]: {
      experiment_key: string;
      unit_id: string;
      /** null for a mutex holdout or an excluded unit */
      variant: string | null;
      /** bucketed: stored by hashing; forced: a QA override; mutex_holdout: claimed by another experiment of its mutex group; audience_excluded: outside the audience; launched: the variant a stopped experiment launched; holdout: held out by a holdout (the control) */
      reason: "bucketed" | "forced" | "mutex_holdout" | "audience_excluded" | "launched" | "holdout";
      /** present when the assignment is stored (sticky) */
      assignment_id?: string;
      /** with reason holdout: the holdout that keeps the unit on the control */
      holdout_id?: string;
      /** ISO 8601 UTC with milliseconds, or null; format: date-time */
      exposure_logged_at?: string | null;
    };
  };
  /** requested keys with no running experiment (omitted from assignments) */
  not_found: Array<string>;
};

/** POST /v1/exposures: request body */
export type LogExposureRequest = {
  experiment_key: string;
  /** the unit being assigned (user id, account id, ...) */
  unit_id: string;
  variant: string;
};

/** POST /v1/exposures: 202 body */
export type LogExposureResponse = unknown;

/** GET /v1/assignments/{unit_id}: 200 body */
export type ListUnitAssignmentsResponse = {
  unit_id: string;
  assignments: Array<{
    experiment_key: string;
    unit_id: string;
    /** null for a mutex holdout or an excluded unit */
    variant: string | null;
    /** bucketed: stored by hashing; forced: a QA override; mutex_holdout: claimed by another experiment of its mutex group; audience_excluded: outside the audience; launched: the variant a stopped experiment launched; holdout: held out by a holdout (the control) */
    reason: "bucketed" | "forced" | "mutex_holdout" | "audience_excluded" | "launched" | "holdout";
    /** present when the assignment is stored (sticky) */
    assignment_id?: string;
    /** with reason holdout: the holdout that keeps the unit on the control */
    holdout_id?: string;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    exposure_logged_at?: string | null;
  }>;
};

/** PUT /v1/experiments/{id}/overrides/{unit_id}: request body */
export type SetOverrideRequest = {
  variant: string;
};

/** PUT /v1/experiments/{id}/overrides/{unit_id}: 200 body */
export type SetOverrideResponse = {
  experiment_id: string;
  unit_id: string;
  variant: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** POST /ofrep/v1/evaluate/flags/{key}: request body */
export type OfrepEvaluateFlagRequest = {
  context?: {
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** POST /ofrep/v1/evaluate/flags/{key}: 200 body */
export type OfrepEvaluateFlagResponse = {
  key: string;
  /** the variant key (the control for units outside the experiment) */
  value: string;
  /** SPLIT: bucketed or held out by a holdout; TARGETING_MATCH: a QA override; DEFAULT: outside the experiment; STATIC: a launched variant */
  reason: "SPLIT" | "TARGETING_MATCH" | "DEFAULT" | "STATIC";
  variant?: string;
  metadata: {
    [key: string]: string | boolean;
  };
};

/** POST /ofrep/v1/evaluate/flags: request body */
export type OfrepEvaluateAllFlagsRequest = OfrepEvaluateFlagRequest;

/** POST /ofrep/v1/evaluate/flags: 200 body */
export type OfrepEvaluateAllFlagsResponse = {
  flags: Array<{
    key: string;
    /** the variant key (the control for units outside the experiment) */
    value: string;
    /** SPLIT: bucketed or held out by a holdout; TARGETING_MATCH: a QA override; DEFAULT: outside the experiment; STATIC: a launched variant */
    reason: "SPLIT" | "TARGETING_MATCH" | "DEFAULT" | "STATIC";
    variant?: string;
    metadata: {
      [key: string]: string | boolean;
    };
  }>;
};

/** GET /v1/webhook-sources: 200 body */
export type ListWebhookSourcesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    slug: string;
    name: string;
    /** a disabled source answers 409 to inbound posts */
    enabled: boolean;
    /** where the sender posts: /webhooks/inbound/{workspace_id}/{slug} */
    inbound_path: string;
    /** after a rotation, until when the previous inbound_secret still verifies; null when it no longer does */
    previous_secret_expires_at: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/webhook-sources: request body */
export type CreateWebhookSourceRequest = {
  /** lowercase letters, digits and dashes; unique in the workspace; the last segment of the inbound URL */
  slug: string;
  name: string;
  enabled?: boolean;
};

/** POST /v1/webhook-sources: 201 body */
export type CreateWebhookSourceResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  slug: string;
  name: string;
  /** a disabled source answers 409 to inbound posts */
  enabled: boolean;
  /** where the sender posts: /webhooks/inbound/{workspace_id}/{slug} */
  inbound_path: string;
  /** after a rotation, until when the previous inbound_secret still verifies; null when it no longer does */
  previous_secret_expires_at: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
  /** whsec_...; signs X-Service-Signature. Returned only now: store it. */
  inbound_secret: string;
};

/** GET /v1/webhook-sources/{id}/deliveries: 200 body */
export type ListWebhookDeliveriesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    source_id: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    received_at: string;
    /** accepted: ingested (202); replayed: a repeated Idempotency-Key answered with the stored response, nothing ingested; unauthorized: signature refused (401); disabled: source disabled (409); invalid: body or Idempotency-Key refused (400/412/422); idempotency_conflict: key in flight (409) or reused with another body (422); failed: the buffer was full or unreachable (429/503) or an error (500) */
    outcome: "accepted" | "replayed" | "unauthorized" | "disabled" | "invalid" | "idempotency_conflict" | "failed";
    /** the HTTP status answered */
    status_code: number;
    /** why it was refused, or null */
    reason: string | null;
    idempotency_key: string | null;
    /** events in the body; 0 when the body was not read or not understood */
    event_count: number;
    accepted_count: number;
    rejected_count: number;
  }>;
  next_cursor: string | null;
};

/** GET /v1/webhook-sources/{id}: 200 body */
export type GetWebhookSourceResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  slug: string;
  name: string;
  /** a disabled source answers 409 to inbound posts */
  enabled: boolean;
  /** where the sender posts: /webhooks/inbound/{workspace_id}/{slug} */
  inbound_path: string;
  /** after a rotation, until when the previous inbound_secret still verifies; null when it no longer does */
  previous_secret_expires_at: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** PATCH /v1/webhook-sources/{id}: request body */
export type UpdateWebhookSourceRequest = {
  /** lowercase letters, digits and dashes; unique in the workspace; the last segment of the inbound URL */
  slug?: string;
  name?: string;
  enabled?: boolean;
};

/** PATCH /v1/webhook-sources/{id}: 200 body */
export type UpdateWebhookSourceResponse = GetWebhookSourceResponse;

/** POST /v1/webhook-sources/{id}/rotate-secret: 200 body */
export type RotateWebhookSourceSecretResponse = CreateWebhookSourceResponse;

/** GET /v1/webhook-endpoints: 200 body */
export type ListWebhookEndpointsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** masked: scheme, host and port, then "/…" and the last four characters of the path when at least sixteen more stay hidden (the URL is a secret; only the answer to create shows it whole) */
    url: string;
    description: string;
    event_types: Array<string>;
    /** a disabled endpoint is sent nothing new */
    enabled: boolean;
    /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
    format: "verdict" | "slack";
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    previous_secret_expires_at: string | null;
    /** when the current run of failed attempts began; after three days of failures the endpoint is disabled; format: date-time */
    failing_since: string | null;
    /** why Verdict disabled the endpoint, or null */
    disabled_reason: string | null;
    /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
    experiment_ids: Array<string> | null;
    /** the experiments of `experiment_ids` by name (empty when every experiment is sent) */
    experiments: Array<{
      /** ULID */
      id: string;
      key: string;
      name: string;
    }>;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/webhook-endpoints: request body */
export type CreateWebhookEndpointRequest = {
  /** where deliveries are POSTed: an http or https URL a WHATWG URL parser accepts, with a host and a port from 1 to 65535 (else 422); stored encrypted */
  url: string;
  description?: string;
  /** the event types delivered, or ["*"] for all of them */
  event_types: Array<"experiment.started" | "experiment.stopped" | "experiment.recommendation_changed" | "experiment.guardrail_regressed" | "experiment.srm_detected" | "experiment.srm_cleared" | "experiment.no_data" | "experiment.analysis_failed" | "*">;
  enabled?: boolean;
  /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
  format?: "verdict" | "slack";
  /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
  experiment_ids?: Array<string> | null;
};

/** POST /v1/webhook-endpoints: 201 body */
export type CreateWebhookEndpointResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** masked: scheme, host and port, then "/…" and the last four characters of the path when at least sixteen more stay hidden (the URL is a secret; only the answer to create shows it whole) */
  url: string;
  description: string;
  event_types: Array<string>;
  /** a disabled endpoint is sent nothing new */
  enabled: boolean;
  /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
  format: "verdict" | "slack";
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  previous_secret_expires_at: string | null;
  /** when the current run of failed attempts began; after three days of failures the endpoint is disabled; format: date-time */
  failing_since: string | null;
  /** why Verdict disabled the endpoint, or null */
  disabled_reason: string | null;
  /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
  experiment_ids: Array<string> | null;
  /** the experiments of `experiment_ids` by name (empty when every experiment is sent) */
  experiments: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
  }>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
  /** problems found with the URL now, e.g. a host with no public address (deliveries to it will be refused); never what the host resolves to */
  warnings: Array<string>;
  /** whsec_...; signs Verdict-Signature. Returned only now: store it. */
  secret: string;
};

/** GET /v1/webhook-endpoints/{id}: 200 body */
export type GetWebhookEndpointResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** masked: scheme, host and port, then "/…" and the last four characters of the path when at least sixteen more stay hidden (the URL is a secret; only the answer to create shows it whole) */
  url: string;
  description: string;
  event_types: Array<string>;
  /** a disabled endpoint is sent nothing new */
  enabled: boolean;
  /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
  format: "verdict" | "slack";
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  previous_secret_expires_at: string | null;
  /** when the current run of failed attempts began; after three days of failures the endpoint is disabled; format: date-time */
  failing_since: string | null;
  /** why Verdict disabled the endpoint, or null */
  disabled_reason: string | null;
  /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
  experiment_ids: Array<string> | null;
  /** the experiments of `experiment_ids` by name (empty when every experiment is sent) */
  experiments: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
  }>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** PATCH /v1/webhook-endpoints/{id}: request body */
export type UpdateWebhookEndpointRequest = {
  /** where deliveries are POSTed: an http or https URL a WHATWG URL parser accepts, with a host and a port from 1 to 65535 (else 422); stored encrypted */
  url?: string;
  description?: string;
  /** the event types delivered, or ["*"] for all of them */
  event_types?: Array<"experiment.started" | "experiment.stopped" | "experiment.recommendation_changed" | "experiment.guardrail_regressed" | "experiment.srm_detected" | "experiment.srm_cleared" | "experiment.no_data" | "experiment.analysis_failed" | "*">;
  /** true re-enables an endpoint Verdict disabled, and clears its failure run */
  enabled?: boolean;
  /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
  format?: "verdict" | "slack";
  /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
  experiment_ids?: Array<string> | null;
};

/** PATCH /v1/webhook-endpoints/{id}: 200 body */
export type UpdateWebhookEndpointResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** masked: scheme, host and port, then "/…" and the last four characters of the path when at least sixteen more stay hidden (the URL is a secret; only the answer to create shows it whole) */
  url: string;
  description: string;
  event_types: Array<string>;
  /** a disabled endpoint is sent nothing new */
  enabled: boolean;
  /** verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret */
  format: "verdict" | "slack";
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  previous_secret_expires_at: string | null;
  /** when the current run of failed attempts began; after three days of failures the endpoint is disabled; format: date-time */
  failing_since: string | null;
  /** why Verdict disabled the endpoint, or null */
  disabled_reason: string | null;
  /** the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter */
  experiment_ids: Array<string> | null;
  /** the experiments of `experiment_ids` by name (empty when every experiment is sent) */
  experiments: Array<{
    /** ULID */
    id: string;
    key: string;
    name: string;
  }>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
  /** problems found with the URL now, e.g. a host with no public address (deliveries to it will be refused); never what the host resolves to */
  warnings: Array<string>;
};

/** POST /v1/webhook-endpoints/{id}/rotate-secret: 200 body */
export type RotateWebhookEndpointSecretResponse = CreateWebhookEndpointResponse;

/** GET /v1/webhook-endpoints/{id}/deliveries: 200 body */
export type ListWebhookEndpointDeliveriesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    endpoint_id: string;
    /** ULID */
    event_id: string;
    event_type: string;
    /** the experiment the event is about; null for a test ping, a deleted experiment, and deliveries stored before this field */
    experiment: {
      /** ULID */
      id: string;
      key: string;
      name: string;
    } | null;
    /** pending: an attempt is due (see next_attempt_at); succeeded: a 2xx answered; failed: retries ran out or the endpoint was disabled */
    status: "pending" | "succeeded" | "failed";
    /** attempts made so far */
    attempts: number;
    /** the last attempt’s HTTP status; null when it got no answer */
    response_status: number | null;
    /** the first 1 KB of the last response body (a NUL byte kept as U+FFFD) */
    response_body: string | null;
    /** how long the last attempt took */
    duration_ms: number | null;
    /** why the last attempt failed (a refused address, a timeout, a status), or null */
    last_error: string | null;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    next_attempt_at: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds, or null; format: date-time */
    delivered_at: string | null;
  }>;
  next_cursor: string | null;
};

/** POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver: 202 body */
export type RedeliverWebhookEndpointDeliveryResponse = {
  /** ULID */
  id: string;
  /** ULID */
  endpoint_id: string;
  /** ULID */
  event_id: string;
  event_type: string;
  /** the experiment the event is about; null for a test ping, a deleted experiment, and deliveries stored before this field */
  experiment: {
    /** ULID */
    id: string;
    key: string;
    name: string;
  } | null;
  /** pending: an attempt is due (see next_attempt_at); succeeded: a 2xx answered; failed: retries ran out or the endpoint was disabled */
  status: "pending" | "succeeded" | "failed";
  /** attempts made so far */
  attempts: number;
  /** the last attempt’s HTTP status; null when it got no answer */
  response_status: number | null;
  /** the first 1 KB of the last response body (a NUL byte kept as U+FFFD) */
  response_body: string | null;
  /** how long the last attempt took */
  duration_ms: number | null;
  /** why the last attempt failed (a refused address, a timeout, a status), or null */
  last_error: string | null;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  next_attempt_at: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds, or null; format: date-time */
  delivered_at: string | null;
};

/** POST /v1/webhook-endpoints/{id}/test: 202 body */
export type TestWebhookEndpointResponse = RedeliverWebhookEndpointDeliveryResponse;

/** GET /v1/data-sources: 200 body */
export type ListDataSourcesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    name: string;
    /** postgres: a PostgreSQL server (postgres://); clickhouse: a ClickHouse server (http(s)://) or the embedded engine (chdb:PATH) */
    kind: "postgres" | "clickhouse";
    /** masked: scheme, user, host, port and database; never the password or the query string */
    url: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/data-sources: request body */
export type CreateDataSourceRequest = {
  name: string;
  /** postgres: a PostgreSQL server (postgres://); clickhouse: a ClickHouse server (http(s)://) or the embedded engine (chdb:PATH) */
  kind: "postgres" | "clickhouse";
  /** postgres://user:password@host:5432/database[?sslmode=...] or http(s)://user:password@host:8123/database (ClickHouse), or chdb:PATH; stored encrypted, shown whole only in the answer to the request that sent it */
  url: string;
};

/** POST /v1/data-sources: 201 body */
export type CreateDataSourceResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  name: string;
  /** postgres: a PostgreSQL server (postgres://); clickhouse: a ClickHouse server (http(s)://) or the embedded engine (chdb:PATH) */
  kind: "postgres" | "clickhouse";
  /** at creation, or when a PATCH changed it, the URL as sent; masked otherwise */
  url: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/data-sources/{id}: 200 body */
export type GetDataSourceResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  name: string;
  /** postgres: a PostgreSQL server (postgres://); clickhouse: a ClickHouse server (http(s)://) or the embedded engine (chdb:PATH) */
  kind: "postgres" | "clickhouse";
  /** masked: scheme, user, host, port and database; never the password or the query string */
  url: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** PATCH /v1/data-sources/{id}: request body */
export type UpdateDataSourceRequest = {
  name?: string;
  /** a new URL of the same kind; the masked URL sent back changes nothing */
  url?: string;
};

/** PATCH /v1/data-sources/{id}: 200 body */
export type UpdateDataSourceResponse = CreateDataSourceResponse;

/** POST /v1/data-sources/{id}/test: 200 body */
export type TestDataSourceResponse = {
  /** whether Verdict connected and the source answered */
  ok: boolean;
  /** what the source says its version is; null when it did not answer */
  server_version: string | null;
  duration_ms: number;
  /** why it failed (refused by the network rule, no connection, credentials), never the URL */
  error: string | null;
};

/** GET /v1/fact-tables: 200 body */
export type ListFactTablesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** ULID */
    data_source_id: string;
    name: string;
    sql: string;
    unit_id_column: string;
    timestamp_column: string;
    /** hours before the last refresh’s cutoff that each incremental refresh reads again, so rows arriving late with a timestamp inside them still count (docs/warehouse.md "Incremental refresh"); default 48 */
    restatement_hours: number;
    /** what the source said the SQL returns, when it was last saved */
    columns: Array<{
      name: string;
      /** the source’s own type name */
      type: string;
      kind: "number" | "string" | "timestamp" | "boolean" | "other";
    }>;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/fact-tables: request body */
export type CreateFactTableRequest = {
  data_source_id: string;
  name: string;
  /** one read-only SELECT (or WITH ... SELECT) in the source’s dialect */
  sql: string;
  unit_id_column: string;
  timestamp_column: string;
  /** hours before the last refresh’s cutoff that each incremental refresh reads again, so rows arriving late with a timestamp inside them still count (docs/warehouse.md "Incremental refresh"); default 48 */
  restatement_hours?: number;
};

/** POST /v1/fact-tables: 201 body */
export type CreateFactTableResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** ULID */
  data_source_id: string;
  name: string;
  sql: string;
  unit_id_column: string;
  timestamp_column: string;
  /** hours before the last refresh’s cutoff that each incremental refresh reads again, so rows arriving late with a timestamp inside them still count (docs/warehouse.md "Incremental refresh"); default 48 */
  restatement_hours: number;
  /** what the source said the SQL returns, when it was last saved */
  columns: Array<{
    name: string;
    /** the source’s own type name */
    type: string;
    kind: "number" | "string" | "timestamp" | "boolean" | "other";
  }>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/fact-tables/{id}: 200 body */
export type GetFactTableResponse = CreateFactTableResponse;

/** PATCH /v1/fact-tables/{id}: request body */
export type UpdateFactTableRequest = {
  name?: string;
  /** one read-only SELECT (or WITH ... SELECT) in the source’s dialect */
  sql?: string;
  unit_id_column?: string;
  timestamp_column?: string;
  /** hours before the last refresh’s cutoff that each incremental refresh reads again, so rows arriving late with a timestamp inside them still count (docs/warehouse.md "Incremental refresh"); default 48 */
  restatement_hours?: number;
};

/** PATCH /v1/fact-tables/{id}: 200 body */
export type UpdateFactTableResponse = CreateFactTableResponse;

/** POST /v1/fact-tables/{id}/summary: 200 body */
export type SummarizeFactTableResponse = {
  /** rows the SQL returns now */
  rows: number;
  /** distinct unit ids among them */
  units: number;
  /** the earliest timestamp, as the source writes it */
  first_timestamp: string | null;
  /** the latest timestamp, as the source writes it */
  last_timestamp: string | null;
  duration_ms: number;
};

/** GET /v1/assignment-sources: 200 body */
export type ListAssignmentSourcesResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    workspace_id: string;
    /** ULID */
    data_source_id: string;
    name: string;
    sql: string;
    /** the column holding the unit id */
    unit_id_column: string;
    /** the column holding the experiment’s key */
    experiment_key_column: string;
    /** the column holding the variant’s key */
    variant_key_column: string;
    /** the column holding when the unit was exposed (a timestamp or date) */
    timestamp_column: string;
    /** what the source said the SQL returns, when it was last saved */
    columns: Array<{
      name: string;
      /** the source’s own type name */
      type: string;
      kind: "number" | "string" | "timestamp" | "boolean" | "other";
    }>;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/assignment-sources: request body */
export type CreateAssignmentSourceRequest = {
  data_source_id: string;
  name: string;
  /** one read-only SELECT (or WITH ... SELECT) in the source’s dialect, one row per exposure */
  sql: string;
  /** the column holding the unit id */
  unit_id_column: string;
  /** the column holding the experiment’s key */
  experiment_key_column: string;
  /** the column holding the variant’s key */
  variant_key_column: string;
  /** the column holding when the unit was exposed (a timestamp or date) */
  timestamp_column: string;
};

/** POST /v1/assignment-sources: 201 body */
export type CreateAssignmentSourceResponse = {
  /** ULID */
  id: string;
  /** ULID */
  workspace_id: string;
  /** ULID */
  data_source_id: string;
  name: string;
  sql: string;
  /** the column holding the unit id */
  unit_id_column: string;
  /** the column holding the experiment’s key */
  experiment_key_column: string;
  /** the column holding the variant’s key */
  variant_key_column: string;
  /** the column holding when the unit was exposed (a timestamp or date) */
  timestamp_column: string;
  /** what the source said the SQL returns, when it was last saved */
  columns: Array<{
    name: string;
    /** the source’s own type name */
    type: string;
    kind: "number" | "string" | "timestamp" | "boolean" | "other";
  }>;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/assignment-sources/{id}: 200 body */
export type GetAssignmentSourceResponse = CreateAssignmentSourceResponse;

/** PATCH /v1/assignment-sources/{id}: request body */
export type UpdateAssignmentSourceRequest = {
  name?: string;
  /** one read-only SELECT (or WITH ... SELECT) in the source’s dialect, one row per exposure */
  sql?: string;
  /** the column holding the unit id */
  unit_id_column?: string;
  /** the column holding the experiment’s key */
  experiment_key_column?: string;
  /** the column holding the variant’s key */
  variant_key_column?: string;
  /** the column holding when the unit was exposed (a timestamp or date) */
  timestamp_column?: string;
};

/** PATCH /v1/assignment-sources/{id}: 200 body */
export type UpdateAssignmentSourceResponse = CreateAssignmentSourceResponse;

/** POST /v1/assignment-sources/{id}/summary: 200 body */
export type SummarizeAssignmentSourceResponse = {
  /** per experiment key (at most 100, most units first) */
  experiments: Array<{
    /** the key as the source writes it */
    experiment_key: string;
    /** distinct units exposed */
    units: number;
    variants: Array<{
      variant_key: string;
      /** units whose first exposure is in this variant */
      units: number;
    }>;
    /** units exposed to more than one variant: each counts in the variant of its first exposure */
    units_in_several_variants: number;
    first_timestamp: string | null;
    last_timestamp: string | null;
  }>;
  duration_ms: number;
};

/** POST /webhooks/inbound/{workspace_id}/{source_slug}: request body */
export type ReceiveInboundWebhookRequest = {
  /** what happened; metrics select events by this key */
  event_key: string;
  /** the unit (user, account, ...) the event belongs to */
  unit_id: string;
  /** free-form; at most 16 KB of JSON and nesting depth at most 8 */
  properties?: {
    [key: string]: unknown;
  };
  /** when it happened (default: when received). 7 to 30 days old: accepted and counted as late; older: 412; more than 5 minutes in the future: 422; format: date-time */
  occurred_at?: string;
  /** de-duplication key, unique per workspace for 30 days */
  client_event_id?: string;
} | {
  events: Array<{
    /** what happened; metrics select events by this key */
    event_key: string;
    /** the unit (user, account, ...) the event belongs to */
    unit_id: string;
    /** free-form; at most 16 KB of JSON and nesting depth at most 8 */
    properties?: {
      [key: string]: unknown;
    };
    /** when it happened (default: when received). 7 to 30 days old: accepted and counted as late; older: 412; more than 5 minutes in the future: 422; format: date-time */
    occurred_at?: string;
    /** de-duplication key, unique per workspace for 30 days */
    client_event_id?: string;
  }>;
};

/** POST /webhooks/inbound/{workspace_id}/{source_slug}: 202 body */
export type ReceiveInboundWebhookResponse = {
  /** the delivery as listed at GET /v1/webhook-sources/{id}/deliveries */
  delivery_id: string;
  /** events durably accepted, including repeats of a client_event_id */
  accepted_count: number;
  /** of those, repeats of a client_event_id seen within 30 days */
  idempotent_replay_count: number;
  rejected: Array<{
    /** position in `events` (0 for a single event) */
    index: number;
    reason: string;
  }>;
};

/** GET /v1/leads: 200 body */
export type ListLeadsResponse = {
  data: Array<{
    /** ULID */
    id: string;
    name: string;
    email: string | null;
    status: string;
    task_tool_task_id: string | null;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    updated_at: string;
  }>;
  next_cursor: string | null;
};

/** POST /v1/leads: request body */
export type CreateLeadRequest = {
  name: string;
  email?: string | null;
  /** free text chosen by the workspace (for example new, contacted, won); task-tool statuses map onto it */
  status?: string;
  /** the id of the task in the task-management tool; unique in the workspace; null when not linked */
  task_tool_task_id?: string | null;
};

/** POST /v1/leads: 201 body */
export type CreateLeadResponse = {
  /** ULID */
  id: string;
  name: string;
  email: string | null;
  status: string;
  task_tool_task_id: string | null;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  updated_at: string;
};

/** GET /v1/leads/{id}: 200 body */
export type GetLeadResponse = CreateLeadResponse;

/** PATCH /v1/leads/{id}: request body */
export type UpdateLeadRequest = {
  name?: string;
  email?: string | null;
  /** free text chosen by the workspace (for example new, contacted, won); task-tool statuses map onto it */
  status?: string;
  /** the id of the task in the task-management tool; unique in the workspace; null when not linked */
  task_tool_task_id?: string | null;
};

/** PATCH /v1/leads/{id}: 200 body */
export type UpdateLeadResponse = CreateLeadResponse;

/** GET /v1/task-tool/settings: 200 body */
export type GetTaskToolSettingsResponse = {
  /** task-tool status name -> lead status. Names are compared case-insensitively, so two names differing only in case are refused. */
  status_mapping: {
    [key: string]: string;
  };
  /** after a rotation of the workspace webhook secret, until when the previous one still verifies */
  previous_secret_expires_at: string | null;
  /** null until the settings are first saved */
  updated_at: string | null;
};

/** PUT /v1/task-tool/settings: request body */
export type PutTaskToolSettingsRequest = {
  /** task-tool status name -> lead status. Names are compared case-insensitively, so two names differing only in case are refused. */
  status_mapping: {
    [key: string]: string;
  };
};

/** PUT /v1/task-tool/settings: 200 body */
export type PutTaskToolSettingsResponse = GetTaskToolSettingsResponse;

/** POST /v1/task-tool/settings/rotate-secret: 200 body */
export type RotateWorkspaceWebhookSecretResponse = {
  /** the new workspace webhook secret (signs X-Signature); returned only now */
  webhook_secret: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  previous_secret_expires_at: string;
};

/** POST /webhooks/task-tool/{workspace_id}: request body */
export type ReceiveTaskToolCallbackRequest = {
  /** taskStatusUpdated, taskUpdated or taskDeleted; other events are acknowledged and ignored */
  event: string;
  task_id: string;
  webhook_id?: string;
  /** absent on taskDeleted */
  history_items?: Array<{
    id: string | number;
    /** status items are mirrored; others are ignored */
    field?: string;
    /** milliseconds since the epoch, as a string */
    date?: string;
    before?: {
      status: string | null;
      color?: string;
      orderindex?: number | string;
      type?: string;
      [key: string]: unknown;
    } | null | unknown;
    after?: {
      status: string | null;
      color?: string;
      orderindex?: number | string;
      type?: string;
      [key: string]: unknown;
    } | null | unknown;
    [key: string]: unknown;
  }>;
  [key: string]: unknown;
};

/** POST /webhooks/task-tool/{workspace_id}: 200 body */
export type ReceiveTaskToolCallbackResponse = {
  received: boolean;
  /** true for an event type that is not mirrored */
  ignored?: boolean;
};

/** GET /v1/experiments/{id}/results: 200 body */
export type GetExperimentResultsResponse = {
  /** ULID */
  id: string;
  /** ULID */
  experiment_id: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  computed_at: string;
  /** api: POST .../results/compute; schedule: the cadence; final: after the experiment stopped; cli: verdict analyze */
  trigger: "api" | "schedule" | "final" | "cli";
  primary_metric: {
    /** ULID */
    id: string;
    key: string;
    /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
    name: string;
    /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
    unit: string | null;
    kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
    aggregation: "sum" | "mean" | "count";
    /** the metric’s direction when the snapshot was computed */
    higher_is_better: boolean;
    /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
    cap_applied: number | null;
    /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
    cuped?: {
      /** whether this metric’s posterior, effects and decision use the adjusted statistics */
      applied: boolean;
      /** the pre-period before each unit’s first exposure */
      lookback_days: number;
      /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
      theta: number | null;
      /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
      variance_reduction: number | null;
      /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
      note: string | null;
    } | null;
    /** quantile metrics only: q (0 < q < 1) */
    quantile?: number;
    /** quantile metrics only: over every event’s number, or one value per unit */
    quantile_level?: "event" | "unit";
  } | null;
  /** the primary metric per variant (sample sizes only without one) */
  per_variant: Array<{
    variant_key: string;
    is_control: boolean;
    /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
    sample_size: number;
    /** units with at least one counted event in their window (binary metrics: converted units) */
    conversions: number;
    /** observed per-unit mean (binary: conversion rate); null without a metric */
    observed_rate: number | null;
    posterior: {
      /** posterior mean of the per-unit value; null without a metric */
      mean: number | null;
      /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
      credible_interval_95: [number, number] | null;
    };
    /** probability that this variant has the highest true value; null when undefined */
    prob_best: number | null;
    /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
    expected_loss_if_stop_now: number | null;
    /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
    effect: {
      absolute: {
        /** posterior mean of (variant mean - control mean) */
        mean: number;
        /** 2.5% and 97.5% posterior quantiles of the difference */
        credible_interval_95: [number, number];
      };
      relative: {
        /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
        mean: number | null;
        /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
        credible_interval_95: [number, number] | null;
      };
      /** P(variant better than control) in the metric’s direction */
      chance_to_beat_control: number;
      /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
      p_value?: number;
      /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
      adjusted_p_value?: number | null;
      /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
      adjusted_interval_95?: {
        absolute: [number, number];
        relative: [number, number] | null;
      } | null;
    } | null;
    /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
    quantile?: {
      /** the quantile (0 < q < 1) */
      q: number;
      level: "event" | "unit";
      /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
      value: number | null;
      /** values it was taken over: events at the event level, units at the unit level */
      values: number;
      /** units contributing a value (the clusters at the event level) */
      units: number;
      /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
      interval_95: [number, number] | null;
      /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
      standard_error: number | null;
    };
    /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
    steps?: Array<{
      /** the step’s event */
      event_key: string;
      /** units that completed this step and every one before it, in order, within the window */
      conversions: number;
      /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
      rate: number | null;
      /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
      rate_interval_95: [number, number] | null;
      /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
      step_rate: number | null;
      /** the same Beta posterior interval for step_rate; null when none reached the previous step */
      step_rate_interval_95: [number, number] | null;
    }>;
    /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
    pending_units?: number;
  }>;
  /** the experiment’s secondary_metric_ids, analysed like the primary metric (empty in snapshots computed before secondary metrics existed) */
  secondary_metrics: Array<{
    /** ULID */
    id: string;
    key: string;
    /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
    name: string;
    /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
    unit: string | null;
    kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
    aggregation: "sum" | "mean" | "count";
    /** the metric’s direction when the snapshot was computed */
    higher_is_better: boolean;
    /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
    cap_applied: number | null;
    /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
    cuped?: {
      /** whether this metric’s posterior, effects and decision use the adjusted statistics */
      applied: boolean;
      /** the pre-period before each unit’s first exposure */
      lookback_days: number;
      /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
      theta: number | null;
      /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
      variance_reduction: number | null;
      /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
      note: string | null;
    } | null;
    /** quantile metrics only: q (0 < q < 1) */
    quantile?: number;
    /** quantile metrics only: over every event’s number, or one value per unit */
    quantile_level?: "event" | "unit";
    per_variant: Array<{
      variant_key: string;
      is_control: boolean;
      /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
      sample_size: number;
      /** units with at least one counted event in their window (binary metrics: converted units) */
      conversions: number;
      /** observed per-unit mean (binary: conversion rate); null without a metric */
      observed_rate: number | null;
      posterior: {
        /** posterior mean of the per-unit value; null without a metric */
        mean: number | null;
        /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
        credible_interval_95: [number, number] | null;
      };
      /** probability that this variant has the highest true value; null when undefined */
      prob_best: number | null;
      /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
      expected_loss_if_stop_now: number | null;
      /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
      effect: {
        absolute: {
          /** posterior mean of (variant mean - control mean) */
          mean: number;
          /** 2.5% and 97.5% posterior quantiles of the difference */
          credible_interval_95: [number, number];
        };
        relative: {
          /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
          mean: number | null;
          /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
          credible_interval_95: [number, number] | null;
        };
        /** P(variant better than control) in the metric’s direction */
        chance_to_beat_control: number;
        /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
        p_value?: number;
        /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
        adjusted_p_value?: number | null;
        /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
        adjusted_interval_95?: {
          absolute: [number, number];
          relative: [number, number] | null;
        } | null;
      } | null;
      /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
      quantile?: {
        /** the quantile (0 < q < 1) */
        q: number;
        level: "event" | "unit";
        /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
        value: number | null;
        /** values it was taken over: events at the event level, units at the unit level */
        values: number;
        /** units contributing a value (the clusters at the event level) */
        units: number;
        /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
        interval_95: [number, number] | null;
        /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
        standard_error: number | null;
      };
      /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
      steps?: Array<{
        /** the step’s event */
        event_key: string;
        /** units that completed this step and every one before it, in order, within the window */
        conversions: number;
        /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
        rate: number | null;
        /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
        rate_interval_95: [number, number] | null;
        /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
        step_rate: number | null;
        /** the same Beta posterior interval for step_rate; null when none reached the previous step */
        step_rate_interval_95: [number, number] | null;
      }>;
      /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
      pending_units?: number;
    }>;
  }>;
  /** the correction applied over the goals (and guardrails when in scope); null in snapshots computed before it existed */
  multiple_testing: {
    method: "none" | "holm" | "benjamini_hochberg";
    scope: "goals" | "goals_and_guardrails";
    /** p-values adjusted together: metrics in scope times non-control variants with an effect */
    family_size: number;
  } | null;
  guardrails: Array<{
    /** ULID */
    metric_id: string;
    metric_key: string;
    /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
    metric_name: string;
    /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
    unit: string | null;
    /** the metric’s direction when the snapshot was computed */
    higher_is_better: boolean;
    /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
    cap_applied: number | null;
    /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
    cuped?: {
      /** whether this metric’s posterior, effects and decision use the adjusted statistics */
      applied: boolean;
      /** the pre-period before each unit’s first exposure */
      lookback_days: number;
      /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
      theta: number | null;
      /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
      variance_reduction: number | null;
      /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
      note: string | null;
    } | null;
    per_variant: Array<{
      variant_key: string;
      is_control: boolean;
      /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
      sample_size: number;
      /** units with at least one counted event in their window (binary metrics: converted units) */
      conversions: number;
      /** observed per-unit mean (binary: conversion rate); null without a metric */
      observed_rate: number | null;
      posterior: {
        /** posterior mean of the per-unit value; null without a metric */
        mean: number | null;
        /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
        credible_interval_95: [number, number] | null;
      };
      /** probability that this variant has the highest true value; null when undefined */
      prob_best: number | null;
      /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
      expected_loss_if_stop_now: number | null;
      /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
      effect: {
        absolute: {
          /** posterior mean of (variant mean - control mean) */
          mean: number;
          /** 2.5% and 97.5% posterior quantiles of the difference */
          credible_interval_95: [number, number];
        };
        relative: {
          /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
          mean: number | null;
          /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
          credible_interval_95: [number, number] | null;
        };
        /** P(variant better than control) in the metric’s direction */
        chance_to_beat_control: number;
        /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
        p_value?: number;
        /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
        adjusted_p_value?: number | null;
        /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
        adjusted_interval_95?: {
          absolute: [number, number];
          relative: [number, number] | null;
        } | null;
      } | null;
      /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
      quantile?: {
        /** the quantile (0 < q < 1) */
        q: number;
        level: "event" | "unit";
        /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
        value: number | null;
        /** values it was taken over: events at the event level, units at the unit level */
        values: number;
        /** units contributing a value (the clusters at the event level) */
        units: number;
        /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
        interval_95: [number, number] | null;
        /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
        standard_error: number | null;
      };
      /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
      steps?: Array<{
        /** the step’s event */
        event_key: string;
        /** units that completed this step and every one before it, in order, within the window */
        conversions: number;
        /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
        rate: number | null;
        /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
        rate_interval_95: [number, number] | null;
        /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
        step_rate: number | null;
        /** the same Beta posterior interval for step_rate; null when none reached the previous step */
        step_rate_interval_95: [number, number] | null;
      }>;
      /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
      pending_units?: number;
    }>;
  }>;
  traffic: Array<{
    variant_key: string;
    /** the variant’s weight when the snapshot was computed */
    weight: number;
    /** units whose live exposure is in this variant */
    exposed_units: number;
  }>;
  /** the decision rule found a winner */
  decision_rule_satisfied: boolean;
  /** the decision rule’s verdict on the primary metric */
  decision: {
    verdict: "keep_running" | "winner" | "no_difference" | "max_duration_reached";
    /** the winner, when verdict is winner */
    variant_key: string | null;
    /** why, in words */
    reason: string;
    method: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    /** days from start to the computation (or to the stop) */
    days_elapsed: number;
    /** always-valid rules: running minimum of each treatment’s p-value against control, carried from snapshot to snapshot */
    always_valid_p_values: {
      [key: string]: number;
    } | null;
    /** each guardrail and non-control variant whose chance_to_beat_control there is below 0.05, once every weighted variant reached min_sample_per_variant (empty before) */
    guardrail_regressions: Array<{
      /** ULID */
      metric_id: string;
      metric_key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      metric_name: string;
      variant_key: string;
      /** below 0.05: the variant very likely makes this guardrail worse */
      chance_to_beat_control: number;
    }>;
    /** what to do, weighing the health checks before the effect; never ship while a check fails */
    recommendation: {
      /** ship: a variant won on the primary metric and every check passed; rollback: the control won, or the winner harms a guardrail; investigate: a check failed (SRM, no exposures, no events for a metric, no primary metric); no_difference: the rule found no difference, or the planned duration ended without a winner; keep_running: not enough units, or no rule satisfied yet */
      action: "ship" | "rollback" | "investigate" | "no_difference" | "keep_running";
      /** the variant to give everyone: the winner for ship, the control for rollback; null otherwise */
      variant_key: string | null;
      /** why, most decisive first */
      reasons: Array<{
        /** stable, machine-readable (docs/analysis.md "Reason codes") */
        code: "no_exposures" | "srm" | "no_metric_events" | "no_primary_metric" | "control_won" | "guardrail_regression" | "below_min_sample" | "rule_satisfied" | "no_difference" | "max_duration_reached" | "rule_not_satisfied" | "not_significant_after_correction";
        /** for a person: what was found, by metric and variant names, and what to do */
        message: string;
      }>;
    };
  };
  /** sample-ratio mismatch p-value (Pearson chi-squared); null when undefined */
  srm_chi_squared_p: number | null;
  /** srm_chi_squared_p < 0.001: the split does not match the weights; distrust the results */
  srm_warning: boolean;
  /** results views through the admin UI logged up to the computation */
  peek_count_at_computation: number;
  /** events of the experiment’s metrics from exposed units received 7 to 30 days after they occurred, counted in a metric or not (late_events says which) */
  late_event_count: number;
  /** late_event_count split by what the events did to the results; null in snapshots stored before the split */
  late_events: {
    /** inside the window of a metric with their key (before the stop): they count, and snapshots computed before they arrived lacked them */
    counted: number;
    /** occurred before their unit’s exposure (backfills): they count in no metric (CUPED may read them as the pre-period covariate) */
    before_exposure: number;
    /** after the exposure but outside every window of a metric with their key, or after the stop: they count in no metric */
    outside_window: number;
  } | null;
  weights_changed_since_start: boolean;
  /** the primary metric and SRM per value of each dimension, and of source (empty in snapshots computed before breakdowns existed) */
  breakdowns: Array<{
    /** an experiment dimension, or "source" (the API key that logged the exposure) */
    dimension: string;
    /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
    values: Array<{
      /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
      value: string;
      /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
      label: string;
      /** live exposed units with this value, all variants */
      units: number;
      /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
      per_variant: Array<{
        variant_key: string;
        is_control: boolean;
        /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
        sample_size: number;
        /** units with at least one counted event in their window (binary metrics: converted units) */
        conversions: number;
        /** observed per-unit mean (binary: conversion rate); null without a metric */
        observed_rate: number | null;
        posterior: {
          /** posterior mean of the per-unit value; null without a metric */
          mean: number | null;
          /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
          credible_interval_95: [number, number] | null;
        };
        /** probability that this variant has the highest true value; null when undefined */
        prob_best: number | null;
        /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
        expected_loss_if_stop_now: number | null;
        /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
        effect: {
          absolute: {
            /** posterior mean of (variant mean - control mean) */
            mean: number;
            /** 2.5% and 97.5% posterior quantiles of the difference */
            credible_interval_95: [number, number];
          };
          relative: {
            /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
            mean: number | null;
            /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
            credible_interval_95: [number, number] | null;
          };
          /** P(variant better than control) in the metric’s direction */
          chance_to_beat_control: number;
          /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
          p_value?: number;
          /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
          adjusted_p_value?: number | null;
          /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
          adjusted_interval_95?: {
            absolute: [number, number];
            relative: [number, number] | null;
          } | null;
        } | null;
        /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
        quantile?: {
          /** the quantile (0 < q < 1) */
          q: number;
          level: "event" | "unit";
          /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
          value: number | null;
          /** values it was taken over: events at the event level, units at the unit level */
          values: number;
          /** units contributing a value (the clusters at the event level) */
          units: number;
          /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
          interval_95: [number, number] | null;
          /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
          standard_error: number | null;
        };
        /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
        steps?: Array<{
          /** the step’s event */
          event_key: string;
          /** units that completed this step and every one before it, in order, within the window */
          conversions: number;
          /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
          rate: number | null;
          /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
          rate_interval_95: [number, number] | null;
          /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
          step_rate: number | null;
          /** the same Beta posterior interval for step_rate; null when none reached the previous step */
          step_rate_interval_95: [number, number] | null;
        }>;
        /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
        pending_units?: number;
      }>;
      /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
      srm_chi_squared_p: number | null;
      /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
      srm_warning: boolean;
      /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
      significant_after_correction: boolean;
    }>;
  }>;
  /** the guardrails, then the secondary metrics, each broken down like breakdowns (empty in snapshots computed before these existed, and without dimensions only source) */
  metric_breakdowns: Array<{
    /** ULID */
    metric_id: string;
    metric_key: string;
    /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
    metric_name: string;
    /** where the experiment lists the metric */
    role: "guardrail" | "secondary";
    /** this metric per value of each dimension and of source, as breakdowns gives the primary metric; significant_after_correction is Holm’s over this metric’s own slices and variants */
    breakdowns: Array<{
      /** an experiment dimension, or "source" (the API key that logged the exposure) */
      dimension: string;
      /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
      values: Array<{
        /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
        value: string;
        /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
        label: string;
        /** live exposed units with this value, all variants */
        units: number;
        /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
        per_variant: Array<{
          variant_key: string;
          is_control: boolean;
          /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
          sample_size: number;
          /** units with at least one counted event in their window (binary metrics: converted units) */
          conversions: number;
          /** observed per-unit mean (binary: conversion rate); null without a metric */
          observed_rate: number | null;
          posterior: {
            /** posterior mean of the per-unit value; null without a metric */
            mean: number | null;
            /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
            credible_interval_95: [number, number] | null;
          };
          /** probability that this variant has the highest true value; null when undefined */
          prob_best: number | null;
          /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
          expected_loss_if_stop_now: number | null;
          /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
          effect: {
            absolute: {
              /** posterior mean of (variant mean - control mean) */
              mean: number;
              /** 2.5% and 97.5% posterior quantiles of the difference */
              credible_interval_95: [number, number];
            };
            relative: {
              /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
              mean: number | null;
              /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
              credible_interval_95: [number, number] | null;
            };
            /** P(variant better than control) in the metric’s direction */
            chance_to_beat_control: number;
            /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
            p_value?: number;
            /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
            adjusted_p_value?: number | null;
            /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
            adjusted_interval_95?: {
              absolute: [number, number];
              relative: [number, number] | null;
            } | null;
          } | null;
          /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
          quantile?: {
            /** the quantile (0 < q < 1) */
            q: number;
            level: "event" | "unit";
            /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
            value: number | null;
            /** values it was taken over: events at the event level, units at the unit level */
            values: number;
            /** units contributing a value (the clusters at the event level) */
            units: number;
            /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
            interval_95: [number, number] | null;
            /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
            standard_error: number | null;
          };
          /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
          steps?: Array<{
            /** the step’s event */
            event_key: string;
            /** units that completed this step and every one before it, in order, within the window */
            conversions: number;
            /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
            rate: number | null;
            /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
            rate_interval_95: [number, number] | null;
            /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
            step_rate: number | null;
            /** the same Beta posterior interval for step_rate; null when none reached the previous step */
            step_rate_interval_95: [number, number] | null;
          }>;
          /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
          pending_units?: number;
        }>;
        /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
        srm_chi_squared_p: number | null;
        /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
        srm_warning: boolean;
        /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
        significant_after_correction: boolean;
      }>;
    }>;
  }>;
  /** null in snapshots computed before incremental analysis existed */
  computation: {
    /** incremental: the rollups were refreshed with what is new and aggregated; full: computed from all raw events, rollups untouched */
    mode: "incremental" | "full";
    /** raw event rows the computation read (incremental: the refresh’s new events and the events of units it rebuilt; full: the rows the main pass joined) */
    events_read: number;
    /** units whose rollups the refresh rebuilt or updated (0 for a full computation) */
    units_refreshed: number;
    /** from the request to the snapshot, before it was stored */
    duration_ms: number;
    /** where the sums were computed: the primary database (sqlite, postgres) or ClickHouse when VERDICT_CLICKHOUSE_URL is set (docs/analysis.md "ClickHouse"); null in snapshots computed before this field existed */
    store: "sqlite" | "postgres" | "clickhouse" | null;
    /** present when metrics read fact tables on a data source (docs/warehouse.md) */
    warehouse?: {
      /** incremental: each unit’s kept counts plus the rows from the previous cutoff on; full: every row read again, the kept state replaced */
      mode: "incremental" | "full";
      /** fact rows the sources returned counts of (inside a unit’s periods), summed over the distinct reads: one per fact table, column, filter and periods (a percentile cap reads the window alone) */
      rows_read: number;
      /** units whose whole history was read: exposed or re-exposed since the last refresh, or all on a full one */
      units_read_in_full: number;
      /** units read only from the previous cutoff on */
      units_read_from_cutoff: number;
      /** the earliest previous cutoff the incremental reads started from, or null when none did */
      read_from: string | null;
      /** rows before this are now kept in Verdict per unit; the next incremental refresh reads from here */
      settled_before: string | null;
    };
  } | null;
  /** progress toward the planned sample and the MDE (docs/statistics.md section 9a); null in snapshots stored before planning existed */
  planning: {
    /** days from the start to the computation (or to the stop) */
    days_elapsed: number;
    /** exposed units a day so far, every variant together; null before any unit or time */
    daily_units: number | null;
    /** days until every weighted variant holds min_sample_per_variant units at the traffic seen so far; 0 once it does; null without traffic */
    days_remaining: number | null;
    /** the relative lift the decision rule detects with 80% power at the current sample, from the control’s own mean and variance; null without a primary metric or baseline */
    mde_at_current_sample: number | null;
    /** days from now until the sample lets the rule detect its minimum_detectable_effect with 80% power, at the traffic seen so far; 0 once it does; null when unknown */
    expected_days_to_mde: number | null;
  } | null;
};

/** GET /v1/experiments/{id}/results/history: 200 body */
export type GetExperimentResultsHistoryResponse = {
  /** ULID */
  experiment_id: string;
  /** oldest first */
  snapshots: Array<{
    /** ULID */
    id: string;
    /** ULID */
    experiment_id: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    computed_at: string;
    /** api: POST .../results/compute; schedule: the cadence; final: after the experiment stopped; cli: verdict analyze */
    trigger: "api" | "schedule" | "final" | "cli";
    primary_metric: {
      /** ULID */
      id: string;
      key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
      aggregation: "sum" | "mean" | "count";
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      /** quantile metrics only: q (0 < q < 1) */
      quantile?: number;
      /** quantile metrics only: over every event’s number, or one value per unit */
      quantile_level?: "event" | "unit";
    } | null;
    /** the primary metric per variant (sample sizes only without one) */
    per_variant: Array<{
      variant_key: string;
      is_control: boolean;
      /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
      sample_size: number;
      /** units with at least one counted event in their window (binary metrics: converted units) */
      conversions: number;
      /** observed per-unit mean (binary: conversion rate); null without a metric */
      observed_rate: number | null;
      posterior: {
        /** posterior mean of the per-unit value; null without a metric */
        mean: number | null;
        /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
        credible_interval_95: [number, number] | null;
      };
      /** probability that this variant has the highest true value; null when undefined */
      prob_best: number | null;
      /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
      expected_loss_if_stop_now: number | null;
      /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
      effect: {
        absolute: {
          /** posterior mean of (variant mean - control mean) */
          mean: number;
          /** 2.5% and 97.5% posterior quantiles of the difference */
          credible_interval_95: [number, number];
        };
        relative: {
          /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
          mean: number | null;
          /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
          credible_interval_95: [number, number] | null;
        };
        /** P(variant better than control) in the metric’s direction */
        chance_to_beat_control: number;
        /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
        p_value?: number;
        /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
        adjusted_p_value?: number | null;
        /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
        adjusted_interval_95?: {
          absolute: [number, number];
          relative: [number, number] | null;
        } | null;
      } | null;
      /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
      quantile?: {
        /** the quantile (0 < q < 1) */
        q: number;
        level: "event" | "unit";
        /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
        value: number | null;
        /** values it was taken over: events at the event level, units at the unit level */
        values: number;
        /** units contributing a value (the clusters at the event level) */
        units: number;
        /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
        interval_95: [number, number] | null;
        /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
        standard_error: number | null;
      };
      /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
      steps?: Array<{
        /** the step’s event */
        event_key: string;
        /** units that completed this step and every one before it, in order, within the window */
        conversions: number;
        /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
        rate: number | null;
        /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
        rate_interval_95: [number, number] | null;
        /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
        step_rate: number | null;
        /** the same Beta posterior interval for step_rate; null when none reached the previous step */
        step_rate_interval_95: [number, number] | null;
      }>;
      /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
      pending_units?: number;
    }>;
    /** the experiment’s secondary_metric_ids, analysed like the primary metric (empty in snapshots computed before secondary metrics existed) */
    secondary_metrics: Array<{
      /** ULID */
      id: string;
      key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
      aggregation: "sum" | "mean" | "count";
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      /** quantile metrics only: q (0 < q < 1) */
      quantile?: number;
      /** quantile metrics only: over every event’s number, or one value per unit */
      quantile_level?: "event" | "unit";
      per_variant: Array<{
        variant_key: string;
        is_control: boolean;
        /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
        sample_size: number;
        /** units with at least one counted event in their window (binary metrics: converted units) */
        conversions: number;
        /** observed per-unit mean (binary: conversion rate); null without a metric */
        observed_rate: number | null;
        posterior: {
          /** posterior mean of the per-unit value; null without a metric */
          mean: number | null;
          /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
          credible_interval_95: [number, number] | null;
        };
        /** probability that this variant has the highest true value; null when undefined */
        prob_best: number | null;
        /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
        expected_loss_if_stop_now: number | null;
        /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
        effect: {
          absolute: {
            /** posterior mean of (variant mean - control mean) */
            mean: number;
            /** 2.5% and 97.5% posterior quantiles of the difference */
            credible_interval_95: [number, number];
          };
          relative: {
            /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
            mean: number | null;
            /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
            credible_interval_95: [number, number] | null;
          };
          /** P(variant better than control) in the metric’s direction */
          chance_to_beat_control: number;
          /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
          p_value?: number;
          /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
          adjusted_p_value?: number | null;
          /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
          adjusted_interval_95?: {
            absolute: [number, number];
            relative: [number, number] | null;
          } | null;
        } | null;
        /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
        quantile?: {
          /** the quantile (0 < q < 1) */
          q: number;
          level: "event" | "unit";
          /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
          value: number | null;
          /** values it was taken over: events at the event level, units at the unit level */
          values: number;
          /** units contributing a value (the clusters at the event level) */
          units: number;
          /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
          interval_95: [number, number] | null;
          /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
          standard_error: number | null;
        };
        /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
        steps?: Array<{
          /** the step’s event */
          event_key: string;
          /** units that completed this step and every one before it, in order, within the window */
          conversions: number;
          /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
          rate: number | null;
          /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
          rate_interval_95: [number, number] | null;
          /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
          step_rate: number | null;
          /** the same Beta posterior interval for step_rate; null when none reached the previous step */
          step_rate_interval_95: [number, number] | null;
        }>;
        /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
        pending_units?: number;
      }>;
    }>;
    /** the correction applied over the goals (and guardrails when in scope); null in snapshots computed before it existed */
    multiple_testing: {
      method: "none" | "holm" | "benjamini_hochberg";
      scope: "goals" | "goals_and_guardrails";
      /** p-values adjusted together: metrics in scope times non-control variants with an effect */
      family_size: number;
    } | null;
    guardrails: Array<{
      /** ULID */
      metric_id: string;
      metric_key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      metric_name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      per_variant: Array<{
        variant_key: string;
        is_control: boolean;
        /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
        sample_size: number;
        /** units with at least one counted event in their window (binary metrics: converted units) */
        conversions: number;
        /** observed per-unit mean (binary: conversion rate); null without a metric */
        observed_rate: number | null;
        posterior: {
          /** posterior mean of the per-unit value; null without a metric */
          mean: number | null;
          /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
          credible_interval_95: [number, number] | null;
        };
        /** probability that this variant has the highest true value; null when undefined */
        prob_best: number | null;
        /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
        expected_loss_if_stop_now: number | null;
        /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
        effect: {
          absolute: {
            /** posterior mean of (variant mean - control mean) */
            mean: number;
            /** 2.5% and 97.5% posterior quantiles of the difference */
            credible_interval_95: [number, number];
          };
          relative: {
            /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
            mean: number | null;
            /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
            credible_interval_95: [number, number] | null;
          };
          /** P(variant better than control) in the metric’s direction */
          chance_to_beat_control: number;
          /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
          p_value?: number;
          /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
          adjusted_p_value?: number | null;
          /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
          adjusted_interval_95?: {
            absolute: [number, number];
            relative: [number, number] | null;
          } | null;
        } | null;
        /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
        quantile?: {
          /** the quantile (0 < q < 1) */
          q: number;
          level: "event" | "unit";
          /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
          value: number | null;
          /** values it was taken over: events at the event level, units at the unit level */
          values: number;
          /** units contributing a value (the clusters at the event level) */
          units: number;
          /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
          interval_95: [number, number] | null;
          /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
          standard_error: number | null;
        };
        /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
        steps?: Array<{
          /** the step’s event */
          event_key: string;
          /** units that completed this step and every one before it, in order, within the window */
          conversions: number;
          /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
          rate: number | null;
          /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
          rate_interval_95: [number, number] | null;
          /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
          step_rate: number | null;
          /** the same Beta posterior interval for step_rate; null when none reached the previous step */
          step_rate_interval_95: [number, number] | null;
        }>;
        /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
        pending_units?: number;
      }>;
    }>;
    traffic: Array<{
      variant_key: string;
      /** the variant’s weight when the snapshot was computed */
      weight: number;
      /** units whose live exposure is in this variant */
      exposed_units: number;
    }>;
    /** the decision rule found a winner */
    decision_rule_satisfied: boolean;
    /** the decision rule’s verdict on the primary metric */
    decision: {
      verdict: "keep_running" | "winner" | "no_difference" | "max_duration_reached";
      /** the winner, when verdict is winner */
      variant_key: string | null;
      /** why, in words */
      reason: string;
      method: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
      /** days from start to the computation (or to the stop) */
      days_elapsed: number;
      /** always-valid rules: running minimum of each treatment’s p-value against control, carried from snapshot to snapshot */
      always_valid_p_values: {
        [key: string]: number;
      } | null;
      /** each guardrail and non-control variant whose chance_to_beat_control there is below 0.05, once every weighted variant reached min_sample_per_variant (empty before) */
      guardrail_regressions: Array<{
        /** ULID */
        metric_id: string;
        metric_key: string;
        /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
        metric_name: string;
        variant_key: string;
        /** below 0.05: the variant very likely makes this guardrail worse */
        chance_to_beat_control: number;
      }>;
      /** what to do, weighing the health checks before the effect; never ship while a check fails */
      recommendation: {
        /** ship: a variant won on the primary metric and every check passed; rollback: the control won, or the winner harms a guardrail; investigate: a check failed (SRM, no exposures, no events for a metric, no primary metric); no_difference: the rule found no difference, or the planned duration ended without a winner; keep_running: not enough units, or no rule satisfied yet */
        action: "ship" | "rollback" | "investigate" | "no_difference" | "keep_running";
        /** the variant to give everyone: the winner for ship, the control for rollback; null otherwise */
        variant_key: string | null;
        /** why, most decisive first */
        reasons: Array<{
          /** stable, machine-readable (docs/analysis.md "Reason codes") */
          code: "no_exposures" | "srm" | "no_metric_events" | "no_primary_metric" | "control_won" | "guardrail_regression" | "below_min_sample" | "rule_satisfied" | "no_difference" | "max_duration_reached" | "rule_not_satisfied" | "not_significant_after_correction";
          /** for a person: what was found, by metric and variant names, and what to do */
          message: string;
        }>;
      };
    };
    /** sample-ratio mismatch p-value (Pearson chi-squared); null when undefined */
    srm_chi_squared_p: number | null;
    /** srm_chi_squared_p < 0.001: the split does not match the weights; distrust the results */
    srm_warning: boolean;
    /** results views through the admin UI logged up to the computation */
    peek_count_at_computation: number;
    /** events of the experiment’s metrics from exposed units received 7 to 30 days after they occurred, counted in a metric or not (late_events says which) */
    late_event_count: number;
    /** late_event_count split by what the events did to the results; null in snapshots stored before the split */
    late_events: {
      /** inside the window of a metric with their key (before the stop): they count, and snapshots computed before they arrived lacked them */
      counted: number;
      /** occurred before their unit’s exposure (backfills): they count in no metric (CUPED may read them as the pre-period covariate) */
      before_exposure: number;
      /** after the exposure but outside every window of a metric with their key, or after the stop: they count in no metric */
      outside_window: number;
    } | null;
    weights_changed_since_start: boolean;
    /** the primary metric and SRM per value of each dimension, and of source (empty in snapshots computed before breakdowns existed) */
    breakdowns: Array<{
      /** an experiment dimension, or "source" (the API key that logged the exposure) */
      dimension: string;
      /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
      values: Array<{
        /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
        value: string;
        /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
        label: string;
        /** live exposed units with this value, all variants */
        units: number;
        /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
        per_variant: Array<{
          variant_key: string;
          is_control: boolean;
          /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
          sample_size: number;
          /** units with at least one counted event in their window (binary metrics: converted units) */
          conversions: number;
          /** observed per-unit mean (binary: conversion rate); null without a metric */
          observed_rate: number | null;
          posterior: {
            /** posterior mean of the per-unit value; null without a metric */
            mean: number | null;
            /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
            credible_interval_95: [number, number] | null;
          };
          /** probability that this variant has the highest true value; null when undefined */
          prob_best: number | null;
          /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
          expected_loss_if_stop_now: number | null;
          /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
          effect: {
            absolute: {
              /** posterior mean of (variant mean - control mean) */
              mean: number;
              /** 2.5% and 97.5% posterior quantiles of the difference */
              credible_interval_95: [number, number];
            };
            relative: {
              /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
              mean: number | null;
              /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
              credible_interval_95: [number, number] | null;
            };
            /** P(variant better than control) in the metric’s direction */
            chance_to_beat_control: number;
            /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
            p_value?: number;
            /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
            adjusted_p_value?: number | null;
            /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
            adjusted_interval_95?: {
              absolute: [number, number];
              relative: [number, number] | null;
            } | null;
          } | null;
          /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
          quantile?: {
            /** the quantile (0 < q < 1) */
            q: number;
            level: "event" | "unit";
            /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
            value: number | null;
            /** values it was taken over: events at the event level, units at the unit level */
            values: number;
            /** units contributing a value (the clusters at the event level) */
            units: number;
            /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
            interval_95: [number, number] | null;
            /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
            standard_error: number | null;
          };
          /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
          steps?: Array<{
            /** the step’s event */
            event_key: string;
            /** units that completed this step and every one before it, in order, within the window */
            conversions: number;
            /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
            rate: number | null;
            /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
            rate_interval_95: [number, number] | null;
            /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
            step_rate: number | null;
            /** the same Beta posterior interval for step_rate; null when none reached the previous step */
            step_rate_interval_95: [number, number] | null;
          }>;
          /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
          pending_units?: number;
        }>;
        /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
        srm_chi_squared_p: number | null;
        /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
        srm_warning: boolean;
        /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
        significant_after_correction: boolean;
      }>;
    }>;
    /** the guardrails, then the secondary metrics, each broken down like breakdowns (empty in snapshots computed before these existed, and without dimensions only source) */
    metric_breakdowns: Array<{
      /** ULID */
      metric_id: string;
      metric_key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      metric_name: string;
      /** where the experiment lists the metric */
      role: "guardrail" | "secondary";
      /** this metric per value of each dimension and of source, as breakdowns gives the primary metric; significant_after_correction is Holm’s over this metric’s own slices and variants */
      breakdowns: Array<{
        /** an experiment dimension, or "source" (the API key that logged the exposure) */
        dimension: string;
        /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
        values: Array<{
          /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
          value: string;
          /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
          label: string;
          /** live exposed units with this value, all variants */
          units: number;
          /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
          per_variant: Array<{
            variant_key: string;
            is_control: boolean;
            /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
            sample_size: number;
            /** units with at least one counted event in their window (binary metrics: converted units) */
            conversions: number;
            /** observed per-unit mean (binary: conversion rate); null without a metric */
            observed_rate: number | null;
            posterior: {
              /** posterior mean of the per-unit value; null without a metric */
              mean: number | null;
              /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
              credible_interval_95: [number, number] | null;
            };
            /** probability that this variant has the highest true value; null when undefined */
            prob_best: number | null;
            /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
            expected_loss_if_stop_now: number | null;
            /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
            effect: {
              absolute: {
                /** posterior mean of (variant mean - control mean) */
                mean: number;
                /** 2.5% and 97.5% posterior quantiles of the difference */
                credible_interval_95: [number, number];
              };
              relative: {
                /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
                mean: number | null;
                /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
                credible_interval_95: [number, number] | null;
              };
              /** P(variant better than control) in the metric’s direction */
              chance_to_beat_control: number;
              /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
              p_value?: number;
              /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
              adjusted_p_value?: number | null;
              /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
              adjusted_interval_95?: {
                absolute: [number, number];
                relative: [number, number] | null;
              } | null;
            } | null;
            /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
            quantile?: {
              /** the quantile (0 < q < 1) */
              q: number;
              level: "event" | "unit";
              /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
              value: number | null;
              /** values it was taken over: events at the event level, units at the unit level */
              values: number;
              /** units contributing a value (the clusters at the event level) */
              units: number;
              /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
              interval_95: [number, number] | null;
              /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
              standard_error: number | null;
            };
            /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
            steps?: Array<{
              /** the step’s event */
              event_key: string;
              /** units that completed this step and every one before it, in order, within the window */
              conversions: number;
              /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
              rate: number | null;
              /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
              rate_interval_95: [number, number] | null;
              /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
              step_rate: number | null;
              /** the same Beta posterior interval for step_rate; null when none reached the previous step */
              step_rate_interval_95: [number, number] | null;
            }>;
            /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
            pending_units?: number;
          }>;
          /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
          srm_chi_squared_p: number | null;
          /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
          srm_warning: boolean;
          /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
          significant_after_correction: boolean;
        }>;
      }>;
    }>;
    /** null in snapshots computed before incremental analysis existed */
    computation: {
      /** incremental: the rollups were refreshed with what is new and aggregated; full: computed from all raw events, rollups untouched */
      mode: "incremental" | "full";
      /** raw event rows the computation read (incremental: the refresh’s new events and the events of units it rebuilt; full: the rows the main pass joined) */
      events_read: number;
      /** units whose rollups the refresh rebuilt or updated (0 for a full computation) */
      units_refreshed: number;
      /** from the request to the snapshot, before it was stored */
      duration_ms: number;
      /** where the sums were computed: the primary database (sqlite, postgres) or ClickHouse when VERDICT_CLICKHOUSE_URL is set (docs/analysis.md "ClickHouse"); null in snapshots computed before this field existed */
      store: "sqlite" | "postgres" | "clickhouse" | null;
      /** present when metrics read fact tables on a data source (docs/warehouse.md) */
      warehouse?: {
        /** incremental: each unit’s kept counts plus the rows from the previous cutoff on; full: every row read again, the kept state replaced */
        mode: "incremental" | "full";
        /** fact rows the sources returned counts of (inside a unit’s periods), summed over the distinct reads: one per fact table, column, filter and periods (a percentile cap reads the window alone) */
        rows_read: number;
        /** units whose whole history was read: exposed or re-exposed since the last refresh, or all on a full one */
        units_read_in_full: number;
        /** units read only from the previous cutoff on */
        units_read_from_cutoff: number;
        /** the earliest previous cutoff the incremental reads started from, or null when none did */
        read_from: string | null;
        /** rows before this are now kept in Verdict per unit; the next incremental refresh reads from here */
        settled_before: string | null;
      };
    } | null;
    /** progress toward the planned sample and the MDE (docs/statistics.md section 9a); null in snapshots stored before planning existed */
    planning: {
      /** days from the start to the computation (or to the stop) */
      days_elapsed: number;
      /** exposed units a day so far, every variant together; null before any unit or time */
      daily_units: number | null;
      /** days until every weighted variant holds min_sample_per_variant units at the traffic seen so far; 0 once it does; null without traffic */
      days_remaining: number | null;
      /** the relative lift the decision rule detects with 80% power at the current sample, from the control’s own mean and variance; null without a primary metric or baseline */
      mde_at_current_sample: number | null;
      /** days from now until the sample lets the rule detect its minimum_detectable_effect with 80% power, at the traffic seen so far; 0 once it does; null when unknown */
      expected_days_to_mde: number | null;
    } | null;
  }>;
  /** pass as cursor for the next (newer) page; null at the end */
  next_cursor: string | null;
} | {
  /** ULID */
  experiment_id: string;
  /** oldest first */
  snapshots: Array<{
    /** ULID */
    id: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    computed_at: string;
    trigger: "api" | "schedule" | "final" | "cli";
    primary_metric_id: string | null;
    /** decision.verdict */
    verdict: "keep_running" | "winner" | "no_difference" | "max_duration_reached";
    srm_warning: boolean;
    /** what to do, weighing the health checks before the effect; never ship while a check fails */
    recommendation: {
      /** ship: a variant won on the primary metric and every check passed; rollback: the control won, or the winner harms a guardrail; investigate: a check failed (SRM, no exposures, no events for a metric, no primary metric); no_difference: the rule found no difference, or the planned duration ended without a winner; keep_running: not enough units, or no rule satisfied yet */
      action: "ship" | "rollback" | "investigate" | "no_difference" | "keep_running";
      /** the variant to give everyone: the winner for ship, the control for rollback; null otherwise */
      variant_key: string | null;
      /** why, most decisive first */
      reasons: Array<{
        /** stable, machine-readable (docs/analysis.md "Reason codes") */
        code: "no_exposures" | "srm" | "no_metric_events" | "no_primary_metric" | "control_won" | "guardrail_regression" | "below_min_sample" | "rule_satisfied" | "no_difference" | "max_duration_reached" | "rule_not_satisfied" | "not_significant_after_correction";
        /** for a person: what was found, by metric and variant names, and what to do */
        message: string;
      }>;
    };
    per_variant: Array<{
      variant_key: string;
      is_control: boolean;
      /** as the full snapshot’s per_variant[].sample_size */
      sample_size: number;
      /** the primary metric’s relative effect against the control; null on the control, without a primary metric, or while undefined */
      relative: {
        /** posterior mean of (variant / control − 1); null when the control mean is 0 */
        mean: number | null;
        /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
        credible_interval_95: [number, number] | null;
      } | null;
      /** null where relative is null */
      chance_to_beat_control: number | null;
    }>;
  }>;
  /** pass as cursor for the next (newer) page; null at the end */
  next_cursor: string | null;
};

/** POST /v1/experiments/{id}/results/compute: 201 body */
export type ComputeExperimentResultsResponse = GetExperimentResultsResponse;

/** POST /v1/planning/power: request body */
export type PlanExperimentPowerRequest = {
  /** ULID */
  environment_id: string;
  variants: Array<{
    key: string;
    /** percent of the experiment’s traffic; all weights sum to 100 */
    weight: number;
    /** the control; the first variant when none is marked */
    is_control?: boolean;
  }>;
  /** every field optional; defaults fill the rest */
  decision_rule?: {
    method?: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
    posterior_threshold?: number;
    /** relative to the control mean */
    minimum_detectable_effect?: number;
    min_sample_per_variant?: number;
    max_duration_days?: number;
    snapshot_cadence_minutes?: number;
  };
  /** the metrics to plan for; the first is the one the answer in words is about */
  metric_ids: Array<string>;
  /** relative lift to detect (0.02 is 2%); becomes the rule’s minimum_detectable_effect. Give it or duration_days; neither: the rule’s */
  minimum_detectable_effect?: number;
  /** plan for this many days: the MDE reachable then */
  duration_days?: number;
  /** new units a day entering the experiment; from history when absent */
  daily_units?: number;
  /** percent of the environment’s traffic the experiment gets (default 100); applies to traffic from history */
  coverage?: number;
  /** a baseline to plan with instead of the metric’s history (every metric of the request) */
  baseline?: {
    /** per-unit mean of the control: the conversion rate of a binary metric */
    mean: number;
    /** per-unit variance of the control: p (1 - p) of a binary metric */
    variance: number;
  };
  /** days of history the baselines and traffic come from (default 14) */
  history_days?: number;
  /** the experiment’s audience: history keeps no unit attributes, so with an audience give daily_units and baseline */
  audience?: {
    [key: string]: unknown;
  } | null;
  /** CUPED variance reduction (docs/statistics.md), or null for none */
  variance_reduction?: {
    method: "cuped";
    /** days before each unit’s first exposure whose events form its pre-period covariate */
    lookback_days?: number;
  } | null;
  /** the power to plan for (default 0.8) */
  power?: number;
  /** days the by-day series cover */
  horizon_days?: number;
};

/** POST /v1/planning/power: 200 body */
export type PlanExperimentPowerResponse = {
  metrics: Array<{
    /** ULID */
    metric_id: string;
    metric_name: string;
    baseline: {
      mean: number;
      /** per-unit variance the plan uses: CUPED-adjusted when variance_reduction is CUPED */
      variance: number;
      units: number | null;
      events: number | null;
      source: "history" | "given";
      variance_reduction: number | null;
    };
    minimum_detectable_effect: number | null;
    units_per_variant: number | null;
    total_units: number | null;
    days_needed: number | null;
    /** MDE reachable with the planned power after each day */
    mde_by_day: Array<{
      day: number;
      mde: number | null;
    }>;
    /** power for the planned MDE after each day */
    power_by_day: Array<{
      day: number;
      power: number;
    }>;
  }>;
  daily_units: {
    /** new units a day entering the experiment */
    value: number;
    source: "history" | "given";
    history_units: number | null;
  };
  decision_rule: {
    method: string;
    posterior_threshold: number;
    minimum_detectable_effect: number;
    min_sample_per_variant: number;
    max_duration_days: number;
    snapshot_cadence_minutes: number;
  };
  power: number;
  history: {
    /** format: date-time */
    from: string;
    /** format: date-time */
    to: string;
    days: number;
  };
  /** the answer in words, about the first metric */
  summary: string;
};

/** POST /v1/experiments/{id}/share-links: request body */
export type CreateShareLinkRequest = {
  /** days the link works, 1 to 90 (default 7) */
  expires_in_days?: number;
};

/** POST /v1/experiments/{id}/share-links: 201 body */
export type CreateShareLinkResponse = ({
  /** ULID */
  id: string;
  /** ULID */
  experiment_id: string;
  status: "active" | "expired" | "revoked";
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  expires_at: string;
  revoked_at: string | null;
}) & ({
  /** the link (shown once): whoever has it reads this experiment’s results, and nothing else, until it expires or is revoked */
  url: string;
});

/** GET /v1/experiments/{id}/share-links: 200 body */
export type ListShareLinksResponse = {
  data: Array<{
    /** ULID */
    id: string;
    /** ULID */
    experiment_id: string;
    status: "active" | "expired" | "revoked";
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    expires_at: string;
    revoked_at: string | null;
  }>;
};

/** GET /v1/shared/{token}: 200 body */
export type ViewSharedResultsResponse = {
  experiment: {
    /** ULID */
    id: string;
    key: string;
    name: string;
    hypothesis: string;
    status: string;
  };
  /** one computed analysis of an experiment (see docs/analysis.md) */
  results: {
    /** ULID */
    id: string;
    /** ULID */
    experiment_id: string;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    computed_at: string;
    /** api: POST .../results/compute; schedule: the cadence; final: after the experiment stopped; cli: verdict analyze */
    trigger: "api" | "schedule" | "final" | "cli";
    primary_metric: {
      /** ULID */
      id: string;
      key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
      aggregation: "sum" | "mean" | "count";
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      /** quantile metrics only: q (0 < q < 1) */
      quantile?: number;
      /** quantile metrics only: over every event’s number, or one value per unit */
      quantile_level?: "event" | "unit";
    } | null;
    /** the primary metric per variant (sample sizes only without one) */
    per_variant: Array<{
      variant_key: string;
      is_control: boolean;
      /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
      sample_size: number;
      /** units with at least one counted event in their window (binary metrics: converted units) */
      conversions: number;
      /** observed per-unit mean (binary: conversion rate); null without a metric */
      observed_rate: number | null;
      posterior: {
        /** posterior mean of the per-unit value; null without a metric */
        mean: number | null;
        /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
        credible_interval_95: [number, number] | null;
      };
      /** probability that this variant has the highest true value; null when undefined */
      prob_best: number | null;
      /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
      expected_loss_if_stop_now: number | null;
      /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
      effect: {
        absolute: {
          /** posterior mean of (variant mean - control mean) */
          mean: number;
          /** 2.5% and 97.5% posterior quantiles of the difference */
          credible_interval_95: [number, number];
        };
        relative: {
          /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
          mean: number | null;
          /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
          credible_interval_95: [number, number] | null;
        };
        /** P(variant better than control) in the metric’s direction */
        chance_to_beat_control: number;
        /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
        p_value?: number;
        /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
        adjusted_p_value?: number | null;
        /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
        adjusted_interval_95?: {
          absolute: [number, number];
          relative: [number, number] | null;
        } | null;
      } | null;
      /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
      quantile?: {
        /** the quantile (0 < q < 1) */
        q: number;
        level: "event" | "unit";
        /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
        value: number | null;
        /** values it was taken over: events at the event level, units at the unit level */
        values: number;
        /** units contributing a value (the clusters at the event level) */
        units: number;
        /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
        interval_95: [number, number] | null;
        /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
        standard_error: number | null;
      };
      /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
      steps?: Array<{
        /** the step’s event */
        event_key: string;
        /** units that completed this step and every one before it, in order, within the window */
        conversions: number;
        /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
        rate: number | null;
        /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
        rate_interval_95: [number, number] | null;
        /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
        step_rate: number | null;
        /** the same Beta posterior interval for step_rate; null when none reached the previous step */
        step_rate_interval_95: [number, number] | null;
      }>;
      /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
      pending_units?: number;
    }>;
    /** the experiment’s secondary_metric_ids, analysed like the primary metric (empty in snapshots computed before secondary metrics existed) */
    secondary_metrics: Array<{
      /** ULID */
      id: string;
      key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      kind: "binary" | "count" | "revenue" | "duration" | "ratio" | "quantile" | "funnel" | "retention";
      aggregation: "sum" | "mean" | "count";
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      /** quantile metrics only: q (0 < q < 1) */
      quantile?: number;
      /** quantile metrics only: over every event’s number, or one value per unit */
      quantile_level?: "event" | "unit";
      per_variant: Array<{
        variant_key: string;
        is_control: boolean;
        /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
        sample_size: number;
        /** units with at least one counted event in their window (binary metrics: converted units) */
        conversions: number;
        /** observed per-unit mean (binary: conversion rate); null without a metric */
        observed_rate: number | null;
        posterior: {
          /** posterior mean of the per-unit value; null without a metric */
          mean: number | null;
          /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
          credible_interval_95: [number, number] | null;
        };
        /** probability that this variant has the highest true value; null when undefined */
        prob_best: number | null;
        /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
        expected_loss_if_stop_now: number | null;
        /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
        effect: {
          absolute: {
            /** posterior mean of (variant mean - control mean) */
            mean: number;
            /** 2.5% and 97.5% posterior quantiles of the difference */
            credible_interval_95: [number, number];
          };
          relative: {
            /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
            mean: number | null;
            /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
            credible_interval_95: [number, number] | null;
          };
          /** P(variant better than control) in the metric’s direction */
          chance_to_beat_control: number;
          /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
          p_value?: number;
          /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
          adjusted_p_value?: number | null;
          /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
          adjusted_interval_95?: {
            absolute: [number, number];
            relative: [number, number] | null;
          } | null;
        } | null;
        /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
        quantile?: {
          /** the quantile (0 < q < 1) */
          q: number;
          level: "event" | "unit";
          /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
          value: number | null;
          /** values it was taken over: events at the event level, units at the unit level */
          values: number;
          /** units contributing a value (the clusters at the event level) */
          units: number;
          /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
          interval_95: [number, number] | null;
          /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
          standard_error: number | null;
        };
        /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
        steps?: Array<{
          /** the step’s event */
          event_key: string;
          /** units that completed this step and every one before it, in order, within the window */
          conversions: number;
          /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
          rate: number | null;
          /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
          rate_interval_95: [number, number] | null;
          /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
          step_rate: number | null;
          /** the same Beta posterior interval for step_rate; null when none reached the previous step */
          step_rate_interval_95: [number, number] | null;
        }>;
        /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
        pending_units?: number;
      }>;
    }>;
    /** the correction applied over the goals (and guardrails when in scope); null in snapshots computed before it existed */
    multiple_testing: {
      method: "none" | "holm" | "benjamini_hochberg";
      scope: "goals" | "goals_and_guardrails";
      /** p-values adjusted together: metrics in scope times non-control variants with an effect */
      family_size: number;
    } | null;
    guardrails: Array<{
      /** ULID */
      metric_id: string;
      metric_key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      metric_name: string;
      /** the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units) */
      unit: string | null;
      /** the metric’s direction when the snapshot was computed */
      higher_is_better: boolean;
      /** the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped */
      cap_applied: number | null;
      /** null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed) */
      cuped?: {
        /** whether this metric’s posterior, effects and decision use the adjusted statistics */
        applied: boolean;
        /** the pre-period before each unit’s first exposure */
        lookback_days: number;
        /** Cov(x, y) / Var(x) on the pooled units; null when not applied */
        theta: number | null;
        /** 1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied */
        variance_reduction: number | null;
        /** why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise */
        note: string | null;
      } | null;
      per_variant: Array<{
        variant_key: string;
        is_control: boolean;
        /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
        sample_size: number;
        /** units with at least one counted event in their window (binary metrics: converted units) */
        conversions: number;
        /** observed per-unit mean (binary: conversion rate); null without a metric */
        observed_rate: number | null;
        posterior: {
          /** posterior mean of the per-unit value; null without a metric */
          mean: number | null;
          /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
          credible_interval_95: [number, number] | null;
        };
        /** probability that this variant has the highest true value; null when undefined */
        prob_best: number | null;
        /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
        expected_loss_if_stop_now: number | null;
        /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
        effect: {
          absolute: {
            /** posterior mean of (variant mean - control mean) */
            mean: number;
            /** 2.5% and 97.5% posterior quantiles of the difference */
            credible_interval_95: [number, number];
          };
          relative: {
            /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
            mean: number | null;
            /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
            credible_interval_95: [number, number] | null;
          };
          /** P(variant better than control) in the metric’s direction */
          chance_to_beat_control: number;
          /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
          p_value?: number;
          /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
          adjusted_p_value?: number | null;
          /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
          adjusted_interval_95?: {
            absolute: [number, number];
            relative: [number, number] | null;
          } | null;
        } | null;
        /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
        quantile?: {
          /** the quantile (0 < q < 1) */
          q: number;
          level: "event" | "unit";
          /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
          value: number | null;
          /** values it was taken over: events at the event level, units at the unit level */
          values: number;
          /** units contributing a value (the clusters at the event level) */
          units: number;
          /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
          interval_95: [number, number] | null;
          /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
          standard_error: number | null;
        };
        /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
        steps?: Array<{
          /** the step’s event */
          event_key: string;
          /** units that completed this step and every one before it, in order, within the window */
          conversions: number;
          /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
          rate: number | null;
          /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
          rate_interval_95: [number, number] | null;
          /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
          step_rate: number | null;
          /** the same Beta posterior interval for step_rate; null when none reached the previous step */
          step_rate_interval_95: [number, number] | null;
        }>;
        /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
        pending_units?: number;
      }>;
    }>;
    traffic: Array<{
      variant_key: string;
      /** the variant’s weight when the snapshot was computed */
      weight: number;
      /** units whose live exposure is in this variant */
      exposed_units: number;
    }>;
    /** the decision rule found a winner */
    decision_rule_satisfied: boolean;
    /** the decision rule’s verdict on the primary metric */
    decision: {
      verdict: "keep_running" | "winner" | "no_difference" | "max_duration_reached";
      /** the winner, when verdict is winner */
      variant_key: string | null;
      /** why, in words */
      reason: string;
      method: "bayesian.posterior_threshold" | "bayesian.always_valid_evalue" | "frequentist.sequential_msprt";
      /** days from start to the computation (or to the stop) */
      days_elapsed: number;
      /** always-valid rules: running minimum of each treatment’s p-value against control, carried from snapshot to snapshot */
      always_valid_p_values: {
        [key: string]: number;
      } | null;
      /** each guardrail and non-control variant whose chance_to_beat_control there is below 0.05, once every weighted variant reached min_sample_per_variant (empty before) */
      guardrail_regressions: Array<{
        /** ULID */
        metric_id: string;
        metric_key: string;
        /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
        metric_name: string;
        variant_key: string;
        /** below 0.05: the variant very likely makes this guardrail worse */
        chance_to_beat_control: number;
      }>;
      /** what to do, weighing the health checks before the effect; never ship while a check fails */
      recommendation: {
        /** ship: a variant won on the primary metric and every check passed; rollback: the control won, or the winner harms a guardrail; investigate: a check failed (SRM, no exposures, no events for a metric, no primary metric); no_difference: the rule found no difference, or the planned duration ended without a winner; keep_running: not enough units, or no rule satisfied yet */
        action: "ship" | "rollback" | "investigate" | "no_difference" | "keep_running";
        /** the variant to give everyone: the winner for ship, the control for rollback; null otherwise */
        variant_key: string | null;
        /** why, most decisive first */
        reasons: Array<{
          /** stable, machine-readable (docs/analysis.md "Reason codes") */
          code: "no_exposures" | "srm" | "no_metric_events" | "no_primary_metric" | "control_won" | "guardrail_regression" | "below_min_sample" | "rule_satisfied" | "no_difference" | "max_duration_reached" | "rule_not_satisfied" | "not_significant_after_correction";
          /** for a person: what was found, by metric and variant names, and what to do */
          message: string;
        }>;
      };
    };
    /** sample-ratio mismatch p-value (Pearson chi-squared); null when undefined */
    srm_chi_squared_p: number | null;
    /** srm_chi_squared_p < 0.001: the split does not match the weights; distrust the results */
    srm_warning: boolean;
    /** results views through the admin UI logged up to the computation */
    peek_count_at_computation: number;
    /** events of the experiment’s metrics from exposed units received 7 to 30 days after they occurred, counted in a metric or not (late_events says which) */
    late_event_count: number;
    /** late_event_count split by what the events did to the results; null in snapshots stored before the split */
    late_events: {
      /** inside the window of a metric with their key (before the stop): they count, and snapshots computed before they arrived lacked them */
      counted: number;
      /** occurred before their unit’s exposure (backfills): they count in no metric (CUPED may read them as the pre-period covariate) */
      before_exposure: number;
      /** after the exposure but outside every window of a metric with their key, or after the stop: they count in no metric */
      outside_window: number;
    } | null;
    weights_changed_since_start: boolean;
    /** the primary metric and SRM per value of each dimension, and of source (empty in snapshots computed before breakdowns existed) */
    breakdowns: Array<{
      /** an experiment dimension, or "source" (the API key that logged the exposure) */
      dimension: string;
      /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
      values: Array<{
        /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
        value: string;
        /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
        label: string;
        /** live exposed units with this value, all variants */
        units: number;
        /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
        per_variant: Array<{
          variant_key: string;
          is_control: boolean;
          /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
          sample_size: number;
          /** units with at least one counted event in their window (binary metrics: converted units) */
          conversions: number;
          /** observed per-unit mean (binary: conversion rate); null without a metric */
          observed_rate: number | null;
          posterior: {
            /** posterior mean of the per-unit value; null without a metric */
            mean: number | null;
            /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
            credible_interval_95: [number, number] | null;
          };
          /** probability that this variant has the highest true value; null when undefined */
          prob_best: number | null;
          /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
          expected_loss_if_stop_now: number | null;
          /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
          effect: {
            absolute: {
              /** posterior mean of (variant mean - control mean) */
              mean: number;
              /** 2.5% and 97.5% posterior quantiles of the difference */
              credible_interval_95: [number, number];
            };
            relative: {
              /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
              mean: number | null;
              /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
              credible_interval_95: [number, number] | null;
            };
            /** P(variant better than control) in the metric’s direction */
            chance_to_beat_control: number;
            /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
            p_value?: number;
            /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
            adjusted_p_value?: number | null;
            /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
            adjusted_interval_95?: {
              absolute: [number, number];
              relative: [number, number] | null;
            } | null;
          } | null;
          /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
          quantile?: {
            /** the quantile (0 < q < 1) */
            q: number;
            level: "event" | "unit";
            /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
            value: number | null;
            /** values it was taken over: events at the event level, units at the unit level */
            values: number;
            /** units contributing a value (the clusters at the event level) */
            units: number;
            /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
            interval_95: [number, number] | null;
            /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
            standard_error: number | null;
          };
          /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
          steps?: Array<{
            /** the step’s event */
            event_key: string;
            /** units that completed this step and every one before it, in order, within the window */
            conversions: number;
            /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
            rate: number | null;
            /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
            rate_interval_95: [number, number] | null;
            /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
            step_rate: number | null;
            /** the same Beta posterior interval for step_rate; null when none reached the previous step */
            step_rate_interval_95: [number, number] | null;
          }>;
          /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
          pending_units?: number;
        }>;
        /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
        srm_chi_squared_p: number | null;
        /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
        srm_warning: boolean;
        /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
        significant_after_correction: boolean;
      }>;
    }>;
    /** the guardrails, then the secondary metrics, each broken down like breakdowns (empty in snapshots computed before these existed, and without dimensions only source) */
    metric_breakdowns: Array<{
      /** ULID */
      metric_id: string;
      metric_key: string;
      /** the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried) */
      metric_name: string;
      /** where the experiment lists the metric */
      role: "guardrail" | "secondary";
      /** this metric per value of each dimension and of source, as breakdowns gives the primary metric; significant_after_correction is Holm’s over this metric’s own slices and variants */
      breakdowns: Array<{
        /** an experiment dimension, or "source" (the API key that logged the exposure) */
        dimension: string;
        /** the top 20 values by units (most first), then "(other)" and "(none)" when they have units */
        values: Array<{
          /** the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value */
          value: string;
          /** what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself */
          label: string;
          /** live exposed units with this value, all variants */
          units: number;
          /** the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric) */
          per_variant: Array<{
            variant_key: string;
            is_control: boolean;
            /** units analysed: the exposed units (for a mean metric, those with at least one value in their window) */
            sample_size: number;
            /** units with at least one counted event in their window (binary metrics: converted units) */
            conversions: number;
            /** observed per-unit mean (binary: conversion rate); null without a metric */
            observed_rate: number | null;
            posterior: {
              /** posterior mean of the per-unit value; null without a metric */
              mean: number | null;
              /** 2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric) */
              credible_interval_95: [number, number] | null;
            };
            /** probability that this variant has the highest true value; null when undefined */
            prob_best: number | null;
            /** E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined */
            expected_loss_if_stop_now: number | null;
            /** against the control; null on the control, without a metric, and while an arm has too few units for a posterior */
            effect: {
              absolute: {
                /** posterior mean of (variant mean - control mean) */
                mean: number;
                /** 2.5% and 97.5% posterior quantiles of the difference */
                credible_interval_95: [number, number];
              };
              relative: {
                /** posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion) */
                mean: number | null;
                /** 2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0 */
                credible_interval_95: [number, number] | null;
              };
              /** P(variant better than control) in the metric’s direction */
              chance_to_beat_control: number;
              /** two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed) */
              p_value?: number;
              /** p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family */
              adjusted_p_value?: number | null;
              /** Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise */
              adjusted_interval_95?: {
                absolute: [number, number];
                relative: [number, number] | null;
              } | null;
            } | null;
            /** quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics") */
            quantile?: {
              /** the quantile (0 < q < 1) */
              q: number;
              level: "event" | "unit";
              /** the sample quantile of the values (numpy’s default linear interpolation); null without values */
              value: number | null;
              /** values it was taken over: events at the event level, units at the unit level */
              values: number;
              /** units contributing a value (the clusters at the event level) */
              units: number;
              /** the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level) */
              interval_95: [number, number] | null;
              /** the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values */
              standard_error: number | null;
            };
            /** funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics */
            steps?: Array<{
              /** the step’s event */
              event_key: string;
              /** units that completed this step and every one before it, in order, within the window */
              conversions: number;
              /** conversions / sample_size: the share of the variant’s units that got this far; null without units */
              rate: number | null;
              /** 2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units */
              rate_interval_95: [number, number] | null;
              /** conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it */
              step_rate: number | null;
              /** the same Beta posterior interval for step_rate; null when none reached the previous step */
              step_rate_interval_95: [number, number] | null;
            }>;
            /** retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics */
            pending_units?: number;
          }>;
          /** sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined */
          srm_chi_squared_p: number | null;
          /** srm_chi_squared_p < 0.001: this slice’s split does not match the weights */
          srm_warning: boolean;
          /** some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control */
          significant_after_correction: boolean;
        }>;
      }>;
    }>;
    /** null in snapshots computed before incremental analysis existed */
    computation: {
      /** incremental: the rollups were refreshed with what is new and aggregated; full: computed from all raw events, rollups untouched */
      mode: "incremental" | "full";
      /** raw event rows the computation read (incremental: the refresh’s new events and the events of units it rebuilt; full: the rows the main pass joined) */
      events_read: number;
      /** units whose rollups the refresh rebuilt or updated (0 for a full computation) */
      units_refreshed: number;
      /** from the request to the snapshot, before it was stored */
      duration_ms: number;
      /** where the sums were computed: the primary database (sqlite, postgres) or ClickHouse when VERDICT_CLICKHOUSE_URL is set (docs/analysis.md "ClickHouse"); null in snapshots computed before this field existed */
      store: "sqlite" | "postgres" | "clickhouse" | null;
      /** present when metrics read fact tables on a data source (docs/warehouse.md) */
      warehouse?: {
        /** incremental: each unit’s kept counts plus the rows from the previous cutoff on; full: every row read again, the kept state replaced */
        mode: "incremental" | "full";
        /** fact rows the sources returned counts of (inside a unit’s periods), summed over the distinct reads: one per fact table, column, filter and periods (a percentile cap reads the window alone) */
        rows_read: number;
        /** units whose whole history was read: exposed or re-exposed since the last refresh, or all on a full one */
        units_read_in_full: number;
        /** units read only from the previous cutoff on */
        units_read_from_cutoff: number;
        /** the earliest previous cutoff the incremental reads started from, or null when none did */
        read_from: string | null;
        /** rows before this are now kept in Verdict per unit; the next incremental refresh reads from here */
        settled_before: string | null;
      };
    } | null;
    /** progress toward the planned sample and the MDE (docs/statistics.md section 9a); null in snapshots stored before planning existed */
    planning: {
      /** days from the start to the computation (or to the stop) */
      days_elapsed: number;
      /** exposed units a day so far, every variant together; null before any unit or time */
      daily_units: number | null;
      /** days until every weighted variant holds min_sample_per_variant units at the traffic seen so far; 0 once it does; null without traffic */
      days_remaining: number | null;
      /** the relative lift the decision rule detects with 80% power at the current sample, from the control’s own mean and variance; null without a primary metric or baseline */
      mde_at_current_sample: number | null;
      /** days from now until the sample lets the rule detect its minimum_detectable_effect with 80% power, at the traffic seen so far; 0 once it does; null when unknown */
      expected_days_to_mde: number | null;
    } | null;
  };
  /** ISO 8601 UTC with milliseconds; format: date-time */
  expires_at: string;
};

/** GET /v1/experiments/{id}/results/export: 200 body */
export type ExportResultsResponse = string | {
  [key: string]: unknown;
};

/** GET /v1/experiments/{id}/results/history/export: 200 body */
export type ExportResultsHistoryResponse = string;

/** GET /v1/users: 200 body */
export type ListUsersResponse = {
  data: Array<{
    /** ULID */
    id: string;
    email: string;
    /** null until the invitation is accepted */
    name: string | null;
    /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
    role: "viewer" | "editor" | "admin";
    /** invited: the invitation is not accepted yet */
    status: "invited" | "active" | "disabled";
    /** the account was made by single sign-on (OpenID Connect) */
    single_sign_on: boolean;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  }>;
};

/** POST /v1/users: request body */
export type InviteUserRequest = {
  /** format: email */
  email: string;
  /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
  role: "viewer" | "editor" | "admin";
  name?: string;
};

/** POST /v1/users: 201 body */
export type InviteUserResponse = {
  /** a person who signs in to the admin UI of this workspace */
  user: {
    /** ULID */
    id: string;
    email: string;
    /** null until the invitation is accepted */
    name: string | null;
    /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
    role: "viewer" | "editor" | "admin";
    /** invited: the invitation is not accepted yet */
    status: "invited" | "active" | "disabled";
    /** the account was made by single sign-on (OpenID Connect) */
    single_sign_on: boolean;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  };
  /** the one-time link (shown once): the token is its last path segment */
  invite_url: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  expires_at: string;
};

/** PATCH /v1/users/{id}: request body */
export type UpdateUserRequest = {
  /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
  role?: "viewer" | "editor" | "admin";
  /** true ends the person’s sessions and refuses their sign-ins */
  disabled?: boolean;
};

/** PATCH /v1/users/{id}: 200 body */
export type UpdateUserResponse = {
  /** ULID */
  id: string;
  email: string;
  /** null until the invitation is accepted */
  name: string | null;
  /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
  role: "viewer" | "editor" | "admin";
  /** invited: the invitation is not accepted yet */
  status: "invited" | "active" | "disabled";
  /** the account was made by single sign-on (OpenID Connect) */
  single_sign_on: boolean;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  created_at: string;
};

/** POST /v1/users/{id}/password-reset: 201 body */
export type IssuePasswordResetResponse = {
  /** a person who signs in to the admin UI of this workspace */
  user: {
    /** ULID */
    id: string;
    email: string;
    /** null until the invitation is accepted */
    name: string | null;
    /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
    role: "viewer" | "editor" | "admin";
    /** invited: the invitation is not accepted yet */
    status: "invited" | "active" | "disabled";
    /** the account was made by single sign-on (OpenID Connect) */
    single_sign_on: boolean;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  };
  /** the one-time link (shown once) that sets a new password */
  reset_url: string;
  /** ISO 8601 UTC with milliseconds; format: date-time */
  expires_at: string;
};

/** POST /v1/users/{id}/sign-out: 200 body */
export type SignOutUserResponse = {
  sessions_ended: number;
};

/** POST /v1/invitations/{token}/accept: request body */
export type AcceptInvitationRequest = {
  name: string;
  /** 12 to 256 characters; stored as an scrypt hash only */
  password: string;
};

/** POST /v1/invitations/{token}/accept: 200 body */
export type AcceptInvitationResponse = {
  /** a person who signs in to the admin UI of this workspace */
  user: {
    /** ULID */
    id: string;
    email: string;
    /** null until the invitation is accepted */
    name: string | null;
    /** viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included */
    role: "viewer" | "editor" | "admin";
    /** invited: the invitation is not accepted yet */
    status: "invited" | "active" | "disabled";
    /** the account was made by single sign-on (OpenID Connect) */
    single_sign_on: boolean;
    /** ISO 8601 UTC with milliseconds; format: date-time */
    created_at: string;
  };
};

/** POST /v1/password-resets/{token}/accept: request body */
export type AcceptPasswordResetRequest = {
  /** 12 to 256 characters; stored as an scrypt hash only */
  password: string;
};

/** POST /v1/password-resets/{token}/accept: 200 body */
export type AcceptPasswordResetResponse = AcceptInvitationResponse;
