// Generated from openapi.json by scripts/sdk-types.ts: do not edit. Run `npm run openapi:write`.

/** RFC 9457 problem details */
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

export type LogExposureRequest = {
  experiment_key: string;
  /** the unit being assigned (user id, account id, ...) */
  unit_id: string;
  variant: string;
};

/** accepted; no body */
export type LogExposureResponse = unknown;

/** a conversion or metric event */
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

/** the event is durably buffered; it reaches the analysis shortly after */
export type TrackEventResponse = {
  accepted: boolean;
  /** true when client_event_id was already seen within 30 days */
  idempotent_replay: boolean;
};

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

/** accepted events are durably buffered; rejected ones are not stored */
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
