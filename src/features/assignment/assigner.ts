import { LRUCache } from 'lru-cache';
import { GroupCommit } from '../../db/group-commit.js';
import type { AppContext } from '../../context.js';
import type { CacheStats } from '../../observability/metrics.js';
import type { Tx } from '../../db/database.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIsoOrNull } from '../../lib/time.js';
import type { Principal } from '../api-keys/authenticator.js';
import { evaluateAudience } from './audience.js';
import { chooseVariant } from './bucketing.js';
import { DefinitionCache, type ExperimentDefinition } from './definitions.js';
import { dimensionValuesOf } from './dimension-values.js';
import { CONTEXT_LIMIT_BYTES, type Assignment, type AssignInput, type ExposureInput } from './schemas.js';
import { claimMutex, findAssignment, insertAssignments, insertExposure, insertFirstExposures, markExposureLogged, type AssignmentRow } from './store.js';

/** A stored assignment as cached; the ISO form of its exposure time is filled on first use. */
type StickyResult = Pick<AssignmentRow, 'id' | 'variant_key' | 'reason' | 'exposure_logged_at'> & { exposureIso?: string | null };

interface FirstAssignment {
  definition: ExperimentDefinition;
  unitId: string;
  variantKey: string;
  logExposure: boolean;
  /** The experiment's dimension values from the context (JSON), or null. */
  dimensionValues: string | null;
  /** The API key that asked, recorded as the exposure's source. */
  sourceKeyId: string | null;
}

/**
 * Sticky assignment. The hot path (a unit already assigned) is answered from memory; a first
 * assignment stores the result and its exposure in one transaction, and when two requests race
 * the first stored row wins and both answer it.
 */
export class Assigner {
  readonly definitions: DefinitionCache;
  readonly #ctx: AppContext;
  readonly #sticky: LRUCache<string, StickyResult>;
  readonly #stickyStats: CacheStats;
  /** First assignments arriving together share one transaction: one commit (fsync) for many units. */
  readonly #firstWrites: GroupCommit<FirstAssignment, StickyResult>;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#firstWrites = new GroupCommit({ commit: (items) => this.#writeGroup(items), weigh: () => 1, maxWeight: 500 });
    this.definitions = new DefinitionCache(ctx, ctx.config.assignmentCacheTtlMs);
    this.#sticky = new LRUCache({ max: 200_000, ttl: ctx.config.stickyCacheTtlMs });
    this.#stickyStats = ctx.metrics.cache('sticky_assignments');
    ctx.changes.subscribe((change) => {
      if (change.topic === 'assignment') this.#sticky.delete(stickyKey(change.experimentId, change.unitId));
    });
  }

  /** The running experiment a key may assign in; 404 otherwise (unknown, not running, other environment). */
  async runningExperiment(principal: Principal, key: string): Promise<ExperimentDefinition> {
    const definition = await this.definitions.experiment(principal.workspaceId, key);
    if (!definition || definition.status !== 'running') throw problems.notFound(`no running experiment with key "${key}"`);
    if (principal.environmentId && definition.environmentId !== principal.environmentId) {
      throw problems.notFound(`no running experiment with key "${key}" in this key's environment`);
    }
    return definition;
  }

  async assign(principal: Principal, input: AssignInput): Promise<Assignment> {
    assertContextSize(input.context);
    const definition = await this.runningExperiment(principal, input.experiment_key);
    return this.assignIn(definition, input, principal.keyId);
  }

  /** `sourceKeyId`: the API key asking, recorded with the exposure a first assignment logs. */
  async assignIn(definition: ExperimentDefinition, input: Omit<AssignInput, 'experiment_key'>, sourceKeyId: string | null = null): Promise<Assignment> {
    const base = { experiment_key: definition.key, unit_id: input.unit_id };
    const forced = definition.overrides.get(input.unit_id);
    if (forced !== undefined) return { ...base, variant: forced, reason: 'forced' };
    // Without an audience a first assignment is stored unconditionally, and storing finds an
    // existing one anyway (a lost insert reads the winner), so a cache miss skips the extra read.
    // With one, the stored assignment must be found first: it wins over today's audience.
    const known = definition.audience === null ? this.#cached(definition.id, input.unit_id) : await this.#stored(definition.id, input.unit_id);
    if (known) return present(base, known);
    if (!(await this.#inAudience(definition, input.context))) return { ...base, variant: null, reason: 'audience_excluded' };
    // Only this miss path reads the dimensions: a sticky hit stays as cheap as before.
    const first = { logExposure: input.log_exposure !== false, dimensionValues: dimensionValuesOf(definition.dimensions, input.context), sourceKeyId };
    const stored = await this.#storeFirst(definition, input.unit_id, first);
    return present(base, stored);
  }

  #cached(experimentId: string, unitId: string): StickyResult | undefined {
    const cached = this.#sticky.get(stickyKey(experimentId, unitId));
    if (cached) this.#stickyStats.hit();
    else this.#stickyStats.miss();
    return cached;
  }

  /** The stored assignment, from the cache or else the database (and then cached). */
  async #stored(experimentId: string, unitId: string): Promise<StickyResult | undefined> {
    const cached = this.#cached(experimentId, unitId);
    if (cached) return cached;
    const row = await findAssignment(this.#ctx.db, experimentId, unitId);
    if (row) this.#sticky.set(stickyKey(experimentId, unitId), row);
    return row;
  }

  async #inAudience(definition: ExperimentDefinition, context: Record<string, unknown> | undefined): Promise<boolean> {
    if (!definition.audience) return true;
    const segments = definition.usesSegments ? await this.definitions.segmentRules(definition.workspaceId) : new Map();
    return evaluateAudience(definition.audience, context ?? {}, (key) => segments.get(key));
  }

  async #storeFirst(definition: ExperimentDefinition, unitId: string, details: Pick<FirstAssignment, 'logExposure' | 'dimensionValues' | 'sourceKeyId'>): Promise<StickyResult> {
    const variantKey = chooseVariant(definition.key, unitId, definition.variants).key;
    const first: FirstAssignment = { definition, unitId, variantKey, ...details };
    const result = await this.#firstWrites.submit(first);
    this.#sticky.set(stickyKey(definition.id, unitId), result);
    return result;
  }

  /**
   * Writes a group in one transaction; should it fail anyway (a deadlock, a serialization
   * error), each item is retried in a transaction of its own.
   */
  async #writeGroup(items: FirstAssignment[]): Promise<StickyResult[]> {
    try {
      return await this.#ctx.db.transaction().execute((trx) => this.#writeFirsts(trx, items));
    } catch (error) {
      if (items.length === 1) throw error;
      return Promise.all(items.map(async (item) => (await this.#ctx.db.transaction().execute((trx) => this.#writeFirsts(trx, [item])))[0] as StickyResult));
    }
  }

  /**
   * Mutex claims one by one, then every assignment in multi-row statements, then the exposures
   * of the rows that were stored; a lost race answers the row stored first. Everything goes in
   * (unit, experiment) order, so concurrent groups on other processes take row locks in the
   * same order and cannot deadlock each other. Requests for the same new pair share one row.
   */
  async #writeFirsts(trx: Tx, items: readonly FirstAssignment[]): Promise<StickyResult[]> {
    const now = this.#ctx.clock.now();
    const rows = new Map<string, AssignmentRow>();
    const sources = new Map<string, string | null>();
    for (const item of [...items].sort(compareFirst)) {
      const key = stickyKey(item.definition.id, item.unitId);
      if (rows.has(key)) continue;
      rows.set(key, await this.#firstRow(trx, item, now));
      sources.set(key, item.sourceKeyId);
    }
    const stored = await insertAssignments(trx, [...rows.values()]);
    const exposed = [...rows.entries()].filter(([, row]) => stored.has(row.id) && row.exposure_logged_at !== null && row.variant_key !== null);
    await insertFirstExposures(
      trx,
      exposed.map(([key, row]) => ({
        workspace_id: row.workspace_id,
        experiment_id: row.experiment_id,
        unit_id: row.unit_id,
        variant_key: row.variant_key as string,
        exposed_at: now,
        source: 'assign' as const,
        source_key_id: sources.get(key) ?? null,
      })),
    );
    const results = new Map<string, StickyResult>();
    for (const [key, row] of rows) results.set(key, stored.has(row.id) ? row : ((await findAssignment(trx, row.experiment_id, row.unit_id)) as AssignmentRow));
    return items.map((item) => results.get(stickyKey(item.definition.id, item.unitId)) as StickyResult);
  }

  /** The row a first assignment would store, after claiming the unit in the mutex group (or holding it out). */
  async #firstRow(trx: Tx, { definition, unitId, variantKey, logExposure, dimensionValues }: FirstAssignment, now: number): Promise<AssignmentRow> {
    const holdout = definition.mutexGroupId ? !(await claimMutex(trx, definition.mutexGroupId, unitId, definition.id, now)) : false;
    return {
      id: newId(),
      workspace_id: definition.workspaceId,
      experiment_id: definition.id,
      unit_id: unitId,
      variant_key: holdout ? null : variantKey,
      reason: holdout ? 'mutex_holdout' : 'bucketed',
      exposure_logged_at: logExposure && !holdout ? now : null,
      created_at: now,
      dimension_values: dimensionValues,
    };
  }

  /**
   * Records the exposure of an assignment made with log_exposure false. Repeats are accepted and
   * ignored; a variant other than the stored one is a conflict.
   */
  async logExposure(principal: Principal, input: ExposureInput): Promise<void> {
    const definition = await this.runningExperiment(principal, input.experiment_key);
    if (definition.overrides.has(input.unit_id)) return; // QA pins are kept out of the analysis
    const stored = await this.#stored(definition.id, input.unit_id);
    if (!stored) throw problems.unitNotAssigned(`unit "${input.unit_id}" has no assignment in "${input.experiment_key}"; call /v1/assign first`);
    if (stored.variant_key !== input.variant) {
      throw problems.assignedVariantDiffers(`unit "${input.unit_id}" is assigned ${stored.variant_key === null ? 'no variant (holdout)' : `"${stored.variant_key}"`}, not "${input.variant}"`);
    }
    if (stored.exposure_logged_at !== null) return;
    const now = this.#ctx.clock.now();
    await this.#ctx.db.transaction().execute(async (trx) => {
      await insertExposure(trx, { workspaceId: definition.workspaceId, experimentId: definition.id, unitId: input.unit_id, variantKey: input.variant, at: now, source: 'api', sourceKeyId: principal.keyId });
      await markExposureLogged(trx, stored.id, now);
    });
    this.#sticky.delete(stickyKey(definition.id, input.unit_id));
  }
}

function compareFirst(a: FirstAssignment, b: FirstAssignment): number {
  if (a.unitId !== b.unitId) return a.unitId < b.unitId ? -1 : 1;
  return a.definition.id < b.definition.id ? -1 : a.definition.id > b.definition.id ? 1 : 0;
}

function stickyKey(experimentId: string, unitId: string): string {
  return `${experimentId}\u0000${unitId}`;
}

function present(base: { experiment_key: string; unit_id: string }, stored: StickyResult): Assignment {
  // Cached results are answered many times; format the timestamp once.
  if (stored.exposureIso === undefined) stored.exposureIso = toIsoOrNull(stored.exposure_logged_at);
  return { ...base, variant: stored.variant_key, reason: stored.reason, assignment_id: stored.id, exposure_logged_at: stored.exposureIso };
}

export function assertContextSize(context: Record<string, unknown> | undefined): void {
  if (context && Buffer.byteLength(JSON.stringify(context)) > CONTEXT_LIMIT_BYTES) {
    throw problems.validation([{ pointer: '/context', message: `must be at most ${CONTEXT_LIMIT_BYTES} bytes of JSON` }]);
  }
}

const assigners = new WeakMap<AppContext, Assigner>();

/** One Assigner (and so one set of caches) per process context, shared by every route that assigns. */
export function assignerFor(ctx: AppContext): Assigner {
  let assigner = assigners.get(ctx);
  if (!assigner) {
    assigner = new Assigner(ctx);
    assigners.set(ctx, assigner);
  }
  return assigner;
}
