import { STATUS_CODES } from 'node:http';

/** One field-level failure: `pointer` is a JSON Pointer into the body, `parameter` names a query or path parameter. */
export interface FieldError {
  pointer?: string;
  parameter?: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

interface ProblemOptions {
  type?: string;
  title?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
}

/**
 * The one error type services throw for expected failures. The error handler turns it into an
 * RFC 9457 problem; anything else is a bug and becomes a 500 with an error id.
 */
export class Problem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(status: number, detail?: string, options: ProblemOptions = {}) {
    super(detail ?? STATUS_CODES[status] ?? 'Error');
    this.status = status;
    this.type = options.type ?? 'about:blank';
    this.title = options.title ?? STATUS_CODES[status] ?? 'Error';
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }

  toBody(instance?: string): ProblemBody {
    const body: ProblemBody = { ...this.extensions, type: this.type, title: this.title, status: this.status };
    if (this.detail !== undefined) body.detail = this.detail;
    if (instance !== undefined) body.instance = instance;
    if (this.errors !== undefined) body.errors = this.errors;
    return body;
  }
}

const TYPE_BASE = 'https://verdict.dev/problems/';

/** A 409 of one kind: a client that meets it can tell from `type` alone what to do next. */
const conflict = (kind: string, title: string) => (detail: string) => new Problem(409, detail, { type: `${TYPE_BASE}${kind}`, title });

/** The registry of problem kinds: each names its status, a stable type URI and a title. */
export const problems = {
  malformedRequest: (detail: string) => new Problem(400, detail, { type: `${TYPE_BASE}malformed-request`, title: 'Malformed request' }),
  invalidParameters: (errors: FieldError[]) =>
    new Problem(400, errors.map((e) => `${e.parameter}: ${e.message}`).join('; '), {
      type: `${TYPE_BASE}invalid-parameters`,
      title: 'Invalid parameters',
      errors,
    }),
  unauthorized: (detail: string) =>
    new Problem(401, detail, { type: `${TYPE_BASE}unauthorized`, title: 'Unauthorized', headers: { 'www-authenticate': 'Bearer' } }),
  /** A webhook whose signature header is missing, malformed, stale or wrong; no Bearer challenge. */
  invalidSignature: (detail: string) => new Problem(401, detail, { type: `${TYPE_BASE}invalid-signature`, title: 'Invalid signature' }),
  forbidden: (detail: string) => new Problem(403, detail, { type: `${TYPE_BASE}forbidden`, title: 'Forbidden' }),
  notFound: (detail: string) => new Problem(404, detail, { type: `${TYPE_BASE}not-found`, title: 'Not Found' }),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new Problem(405, `${method} is not allowed here; allowed: ${allowed.join(', ')}`, {
      type: `${TYPE_BASE}method-not-allowed`,
      title: 'Method Not Allowed',
      headers: { allow: allowed.join(', ') },
    }),
  /** A key or slug already used by another resource of the same kind in the workspace. */
  keyTaken: conflict('key-taken', 'Key taken'),
  /** Another lead of the workspace is already linked to the same task of the task tool. */
  taskAlreadyLinked: conflict('task-already-linked', 'Task already linked'),
  /** A metric that a draft or running experiment or a ratio metric still uses (`referrers` lists them). */
  metricInUse: conflict('metric-in-use', 'Metric in use'),
  /** A segment that another segment or a non-archived experiment still refers to (`referrers` lists them). */
  segmentInUse: conflict('segment-in-use', 'Segment in use'),
  /** A change the experiment's status does not allow (stopped and archived: none; running: a few fields). */
  experimentNotEditable: conflict('experiment-not-editable', 'Experiment not editable in this status'),
  /** A lifecycle move from the wrong status: start from other than draft, stop from other than running. */
  lifecycleMoveNotAllowed: conflict('lifecycle-move-not-allowed', 'Lifecycle move not allowed'),
  /** A holdout change its status does not allow (ended and archived: none; running: name, description, a larger percent). */
  holdoutNotEditable: conflict('holdout-not-editable', 'Holdout not editable in this status'),
  /** A holdout's snapshot asked for before it started. */
  holdoutNotStarted: conflict('holdout-not-started', 'Holdout not started'),
  /** A holdout's snapshot on an analysis store that cannot read first contacts (ClickHouse). */
  holdoutAnalysisUnavailable: conflict('holdout-analysis-unavailable', 'Holdout analysis unavailable on this store'),
  /** Results asked to be computed for an experiment that never started. */
  experimentNotStarted: conflict('experiment-not-started', 'Experiment not started'),
  /** An exposure logged for a unit that has no stored assignment in the experiment. */
  unitNotAssigned: conflict('unit-not-assigned', 'Unit not assigned'),
  /** An exposure logged for a variant other than the one the unit is assigned. */
  assignedVariantDiffers: conflict('assigned-variant-differs', 'Assigned variant differs'),
  /** A delivery to a webhook source that is disabled. */
  sourceDisabled: conflict('source-disabled', 'Source disabled'),
  /** A redelivery of an outbound delivery whose next attempt is already scheduled. */
  deliveryPending: conflict('delivery-pending', 'Delivery pending'),
  /** A test ping or redelivery to a webhook endpoint that is disabled. */
  endpointDisabled: conflict('endpoint-disabled', 'Endpoint disabled'),
  /** A new webhook endpoint in a workspace that has as many as it may (VERDICT_WEBHOOK_MAX_ENDPOINTS). */
  endpointLimitReached: conflict('endpoint-limit-reached', 'Endpoint limit reached'),
  /** Deleting a data source that fact tables still read (`referrers` lists them). */
  dataSourceInUse: conflict('data-source-in-use', 'Data source in use'),
  /** A fact table that metrics read (`referrers` lists them). */
  factTableInUse: conflict('fact-table-in-use', 'Fact table in use'),
  /** An assignment source that experiments read their exposures from (`referrers` lists them). */
  assignmentSourceInUse: conflict('assignment-source-in-use', 'Assignment source in use'),
  /** A snapshot with a metric on a fact table its source cannot compute (a ratio across sources, a bandit steered by it). */
  metricNotComputable: conflict('metric-not-computable', 'Metric not computable on its source'),
  /** A data source that could not be reached: no connection, refused by the network rule, wrong credentials. */
  dataSourceUnreachable: (detail: string) => new Problem(502, detail, { type: `${TYPE_BASE}data-source-unreachable`, title: 'Data source unreachable' }),
  /** A query on a data source that ran past VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS and was stopped. */
  dataSourceTimeout: (detail: string) => new Problem(504, detail, { type: `${TYPE_BASE}data-source-timeout`, title: 'Data source query timed out' }),
  /** A freeze of a template draft that no longer compiles. */
  draftDoesNotCompile: conflict('draft-does-not-compile', 'Draft does not compile'),
  /** An output of a render that failed. */
  renderFailed: conflict('render-failed', 'Render failed'),
  /** An output of a render that is still queued or running (with Retry-After). */
  renderNotReady: conflict('render-not-ready', 'Render not ready'),
  /** An Idempotency-Key whose first request is still being processed (IETF idempotency-key draft). */
  idempotencyInFlight: (detail: string) => new Problem(409, detail, { type: `${TYPE_BASE}idempotency-key-in-flight`, title: 'Request in progress' }),
  /** An Idempotency-Key reused with a different body. */
  idempotencyKeyReused: (detail: string) => new Problem(422, detail, { type: `${TYPE_BASE}idempotency-key-reused`, title: 'Idempotency key reused' }),
  preconditionFailed: (detail: string, errors?: FieldError[]) =>
    new Problem(412, detail, { type: `${TYPE_BASE}precondition-failed`, title: 'Precondition Failed', ...(errors ? { errors } : {}) }),
  /** The request line or a path parameter is longer than the server reads. */
  uriTooLong: (detail: string) => new Problem(414, detail, { type: `${TYPE_BASE}uri-too-long`, title: 'URI Too Long' }),
  payloadTooLarge: (limit: number) =>
    new Problem(413, `the request body exceeds the limit of ${limit} bytes`, { type: `${TYPE_BASE}payload-too-large`, title: 'Payload Too Large' }),
  unsupportedMediaType: (detail: string) => new Problem(415, detail, { type: `${TYPE_BASE}unsupported-media-type`, title: 'Unsupported Media Type' }),
  validation: (errors: FieldError[], detail?: string) =>
    new Problem(422, detail ?? errors.map((e) => `${e.pointer || '/'}: ${e.message}`).join('; '), {
      type: `${TYPE_BASE}validation`,
      title: 'Validation failed',
      errors,
    }),
  /** Node's HTTP parser refused the request line and headers together as too large. */
  headersTooLarge: (limitBytes: number) =>
    new Problem(431, `the request line and headers exceed ${limitBytes} bytes`, {
      type: `${TYPE_BASE}request-header-fields-too-large`,
      title: 'Request Header Fields Too Large',
    }),
  /** The client did not finish sending its request in time. */
  requestTimeout: (detail: string) => new Problem(408, detail, { type: `${TYPE_BASE}request-timeout`, title: 'Request Timeout' }),
  tooManyRequests: (detail: string, retryAfterSeconds: number) =>
    new Problem(429, detail, {
      type: `${TYPE_BASE}too-many-requests`,
      title: 'Too Many Requests',
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
  internal: (errorId: string) =>
    new Problem(500, `an unexpected error occurred; quote error id ${errorId} when reporting it`, {
      type: `${TYPE_BASE}internal`,
      title: 'Internal Server Error',
      extensions: { error_id: errorId },
    }),
  unavailable: (detail: string, retryAfterSeconds?: number) =>
    new Problem(503, detail, {
      type: `${TYPE_BASE}unavailable`,
      title: 'Service Unavailable',
      headers: retryAfterSeconds ? { 'retry-after': String(retryAfterSeconds) } : {},
    }),
};

/**
 * A problem for a status chosen by the HTTP layer rather than by us (the static file server,
 * the router): the registry's kind where one fits, otherwise `about:blank`, whose title is the
 * status phrase (RFC 9457, section 4.2.1).
 */
export function problemForStatus(status: number, detail: string, headers: Record<string, string> = {}): Problem {
  switch (status) {
    case 400:
      return problems.malformedRequest(detail);
    case 403:
      return problems.forbidden(detail);
    case 404:
      return problems.notFound(detail);
    case 412:
      return problems.preconditionFailed(detail);
    default:
      return new Problem(status, detail, { headers });
  }
}
