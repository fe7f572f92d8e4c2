export { createClient, type ClientOptions, type CloseOptions, type VerdictClient } from './client.js';
export type { AssignManyResult, AssignOptions } from './assignments.js';
export { VerdictError, type RejectedEvent, type VerdictErrorKind } from './errors.js';
export type { FetchLike } from './http.js';
export type { Assignment, ClientStats, TrackedEvent } from './types.js';
export type * from './generated/api.js';
