import { VerdictError, httpError } from './errors.js';
import type { AssignBatchResponse, AssignResponse } from './generated/api.js';
import type { Transport } from './http.js';

/** The API's limit of experiments per `/v1/assign/batch` request. */
const MAX_EXPERIMENTS_PER_BATCH = 50;

export interface AssignOptions {
  /** Attributes for audience targeting. */
  context?: Record<string, unknown>;
  /** false when the variant is shown later: then call `logExposure` when it is. */
  logExposure?: boolean;
}

export interface AssignManyResult {
  assignments: Record<string, AssignResponse>;
  /** Requested keys with no running experiment. */
  not_found: string[];
}

function cacheKey(experimentKey: string, unitId: string): string {
  return `${experimentKey}\u0000${unitId}`;
}

function requestKey(experimentKey: string, unitId: string, options: AssignOptions): string {
  return `${cacheKey(experimentKey, unitId)}\u0000${options.logExposure === false ? 0 : 1}\u0000${JSON.stringify(options.context ?? null)}`;
}

function notFound(experimentKey: string): VerdictError {
  return new VerdictError('http', `assign failed with HTTP 404: no running experiment ${experimentKey}`, { status: 404 });
}

/**
 * Assignments, cached per (experiment, unit) for up to `maxAgeMs`: a stored assignment changes
 * only when the experiment stops and launches a variant (or an operator re-buckets), so asking
 * again sooner is wasted work. Results the server did not store (no `assignment_id`: an excluded
 * unit, a launched variant, a holdout's control) can change with the context, a relaunch or the
 * holdout's end, and are not cached. Identical requests made at the same time share one HTTP request.
 */
export class Assignments {
  readonly #transport: Transport;
  readonly #maxCached: number;
  readonly #maxAgeMs: number;
  readonly #cache = new Map<string, { assignment: AssignResponse; at: number }>();
  readonly #pending = new Map<string, Promise<AssignResponse>>();

  /** `maxAgeMs`: how long a cached assignment is trusted (a launch replaces what every unit gets). */
  constructor(transport: Transport, maxCached: number, maxAgeMs = 60_000) {
    this.#transport = transport;
    this.#maxCached = maxCached;
    this.#maxAgeMs = maxAgeMs;
  }

  #cached(experimentKey: string, unitId: string): AssignResponse | undefined {
    const key = cacheKey(experimentKey, unitId);
    const hit = this.#cache.get(key);
    if (!hit) return undefined;
    this.#cache.delete(key);
    if (Date.now() - hit.at >= this.#maxAgeMs) return undefined;
    // Least recently used goes first: move a hit to the end of the Map's order.
    this.#cache.set(key, hit);
    return hit.assignment;
  }

  #remember(assignment: AssignResponse): void {
    if (assignment.assignment_id === undefined) return;
    this.#cache.set(cacheKey(assignment.experiment_key, assignment.unit_id), { assignment, at: Date.now() });
    if (this.#cache.size > this.#maxCached) this.#cache.delete(this.#cache.keys().next().value as string);
  }

  /** Forgets a cached assignment (after its exposure is logged, its cached copy is stale). */
  forget(experimentKey: string, unitId: string): void {
    this.#cache.delete(cacheKey(experimentKey, unitId));
  }

  async assign(experimentKey: string, unitId: string, options: AssignOptions = {}): Promise<AssignResponse> {
    const hit = this.#cached(experimentKey, unitId);
    if (hit) return hit;
    const key = requestKey(experimentKey, unitId, options);
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const request = this.#requestOne(experimentKey, unitId, options).finally(() => this.#pending.delete(key));
    this.#pending.set(key, request);
    return request;
  }

  async #requestOne(experimentKey: string, unitId: string, options: AssignOptions): Promise<AssignResponse> {
    const result = await this.#transport('POST', '/v1/assign', {
      experiment_key: experimentKey,
      unit_id: unitId,
      ...(options.context ? { context: options.context } : {}),
      ...(options.logExposure === false ? { log_exposure: false } : {}),
    });
    if (result.status !== 200) throw httpError(`assign ${experimentKey}`, result.status, result.body);
    const assignment = result.body as AssignResponse;
    this.#remember(assignment);
    return assignment;
  }

  /**
   * Several experiments for one unit: cached ones from the cache, the rest with
   * `/v1/assign/batch` (50 per request), joining any identical request already under way.
   */
  async assignMany(experimentKeys: string[], unitId: string, options: AssignOptions = {}): Promise<AssignManyResult> {
    const unique = [...new Set(experimentKeys)];
    const waiting = new Map<string, Promise<AssignResponse>>();
    const toRequest: string[] = [];
    for (const experimentKey of unique) {
      const hit = this.#cached(experimentKey, unitId);
      const pending = hit ? Promise.resolve(hit) : this.#pending.get(requestKey(experimentKey, unitId, options));
      if (pending) waiting.set(experimentKey, pending);
      else toRequest.push(experimentKey);
    }
    for (let start = 0; start < toRequest.length; start += MAX_EXPERIMENTS_PER_BATCH) {
      const keys = toRequest.slice(start, start + MAX_EXPERIMENTS_PER_BATCH);
      for (const [experimentKey, promise] of this.#requestBatch(keys, unitId, options)) waiting.set(experimentKey, promise);
    }
    const result: AssignManyResult = { assignments: {}, not_found: [] };
    for (const experimentKey of unique) {
      try {
        result.assignments[experimentKey] = await (waiting.get(experimentKey) as Promise<AssignResponse>);
      } catch (error) {
        if (!(error instanceof VerdictError && error.status === 404)) throw error;
        result.not_found.push(experimentKey);
      }
    }
    return result;
  }

  /** One batch request, exposed as one pending promise per experiment so single calls can join it. */
  #requestBatch(keys: string[], unitId: string, options: AssignOptions): Map<string, Promise<AssignResponse>> {
    const response = this.#transport('POST', '/v1/assign/batch', {
      experiments: keys,
      unit_id: unitId,
      ...(options.context ? { context: options.context } : {}),
      ...(options.logExposure === false ? { log_exposure: false } : {}),
    }).then((result) => {
      if (result.status !== 200) throw httpError('assign (batch)', result.status, result.body);
      return result.body as AssignBatchResponse;
    });
    const promises = new Map<string, Promise<AssignResponse>>();
    for (const experimentKey of keys) {
      const key = requestKey(experimentKey, unitId, options);
      const promise = response
        .then((batch) => {
          const assignment = batch.assignments[experimentKey];
          if (!assignment) throw notFound(experimentKey);
          this.#remember(assignment);
          return assignment;
        })
        .finally(() => this.#pending.delete(key));
      // Nobody may be waiting on a key's promise by the time it fails: that is not unhandled.
      promise.catch(() => undefined);
      this.#pending.set(key, promise);
      promises.set(experimentKey, promise);
    }
    return promises;
  }
}
