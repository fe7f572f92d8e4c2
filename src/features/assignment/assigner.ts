import { GroupCommit } from '../../db/group-commit.js';
import type { CacheStats } from '../../observability/metrics.js';
import { problems } from '../../http/problems.js';
import { toIsoOrNull } from '../../lib/time.js';
import type { Principal } from '../api-keys/authenticator.js';
import { evaluateAudience } from './audience.js';
import { chooseVariant } from './bucketing.js';
import { DefinitionCache, type ExperimentDefinition } from './definitions.js';
import { dimensionValuesOf } from './dimension-values.js';
import { ContactRecorder } from '../holdouts/contacts.js';
import { holdingOut } from '../holdouts/membership.js';
import type { AssignmentDeps } from './deps.js';
import { CONTEXT_LIMIT_BYTES, type Assignment, type AssignInput, type ExposureInput } from './schemas.js';
import { writeFirstAssignments, type FirstAssignmentWrite, type StoredAssignment } from './first-writes.js';
import { assignmentLookup, insertExposure, markExposureLogged, type AssignmentLookup } from './store.js';
import { StickyTable } from './sticky-table.js';

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

function toWrite({ definition, unitId, variantKey, logExposure, dimensionValues, sourceKeyId }: FirstAssignment): FirstAssignmentWrite {
  return {
    workspaceId: definition.workspaceId,
    experimentId: definition.id,
    mutexGroupId: definition.mutexGroupId,
    unitId,
    variantKey,
    logExposure,
    dimensionValues,
    sourceKeyId,
  };
}

/**
 * Sticky assignment. The hot path (a unit already assigned) is answered from memory; a first
 * assignment stores the result and its exposure in one transaction, and when two requests race
 * the first stored row wins and both answer it.
 */
export class Assigner {
  readonly definitions: DefinitionCache;
  readonly #ctx: AssignmentDeps;
  readonly #sticky: StickyTable;
  readonly #stickyStats: CacheStats;
  readonly #lookup: AssignmentLookup;
  /** First assignments arriving together share one transaction: one commit (fsync) for many units. */
  readonly #firstWrites: GroupCommit<FirstAssignment, StoredAssignment>;
  /** Held-out and sampled units' first contacts with a covering holdout (holdouts/contacts.ts). */
  readonly #contacts: ContactRecorder;

  constructor(ctx: AssignmentDeps) {
    this.#ctx = ctx;
    this.#contacts = new ContactRecorder(ctx.writes, () => ctx.clock.now());
    this.#lookup = assignmentLookup(ctx.db, ctx.sideReads);
    this.#firstWrites = new GroupCommit({ commit: (items) => this.#writeGroup(items), weigh: () => 1, maxWeight: 500 });
    this.definitions = new DefinitionCache(ctx, ctx.config.assignmentCacheTtlMs);
    this.#sticky = new StickyTable({ capacity: ctx.config.stickyCacheSize, ttlMs: ctx.config.stickyCacheTtlMs, now: () => ctx.clock.now() });
    this.#stickyStats = ctx.metrics.cache('sticky_assignments');
    ctx.metrics.watchStickyCache(() => this.#sticky.size, this.#sticky.capacity);
    ctx.changes.subscribe((change) => {
      if (change.topic === 'assignment') this.#sticky.delete(change.experimentId, change.unitId);
    });
  }

  /** The running experiment a key may assign in; 404 otherwise (unknown, not running, other environment). */
  async runningExperiment(principal: Principal, key: string): Promise<ExperimentDefinition> {
    return runningIn(principal, key, await this.definitions.experiment(principal.workspaceId, key));
  }

  /**
   * `assign`, answered without a promise when memory alone gives the answer (the definition and
   * the unit's assignment cached, or a forced variant). Nearly every SDK call ends there, so the
   * route calls this; anything else continues on the asynchronous path, counted once.
   */
  answer(principal: Principal, input: AssignInput): Assignment | Promise<Assignment> {
    assertContextSize(input.context);
    const cached = this.definitions.cachedExperiment(principal.workspaceId, input.experiment_key);
    if (cached === undefined) return this.assign(principal, input);
    const definition = runningIn(principal, input.experiment_key, cached);
    return this.#withContacts(definition, input.unit_id, this.#fromMemory(definition, input) ?? this.#assignUncached(definition, input, principal.keyId));
  }

  /**
   * The answer, once a first contact of the unit with a covering holdout is recorded: nearly
   * always there is none new, and the answer goes back as it was (without a promise when it had
   * none). QA pins are kept out of the holdout's analysis as out of the experiment's.
   */
  #withContacts(definition: ExperimentDefinition, unitId: string, answer: Assignment | Promise<Assignment>): Assignment | Promise<Assignment> {
    if (definition.holdouts.length === 0 || definition.overrides.has(unitId)) return answer;
    const unseen = this.#contacts.unseen(definition.workspaceId, definition.holdouts, unitId);
    if (unseen.length === 0) return answer;
    return Promise.all([answer, this.#contacts.record(unseen)]).then(([answered]) => answered);
  }

  /**
   * A forced variant; for an experiment without an audience, a held-out unit's control, a launched
   * variant, or the unit's cached assignment.
   */
  #fromMemory(definition: ExperimentDefinition, input: Omit<AssignInput, 'experiment_key'>): Assignment | undefined {
    const forced = definition.overrides.get(input.unit_id);
    if (forced !== undefined) return { experiment_key: definition.key, unit_id: input.unit_id, variant: forced, reason: 'forced' };
    if (definition.audience !== null) return undefined;
    const unstored = unstoredAnswer(definition, input.unit_id);
    if (unstored) return unstored;
    const known = this.#sticky.get(definition.id, input.unit_id);
    if (!known) return undefined;
    this.#stickyStats.hit();
    return present(definition.key, input.unit_id, known);
  }

  async assign(principal: Principal, input: AssignInput): Promise<Assignment> {
    assertContextSize(input.context);
    const definition = await this.runningExperiment(principal, input.experiment_key);
    return this.assignIn(definition, input, principal.keyId);
  }

  /**
   * Assigns the unit in each of `keys` the key may assign in (batch assign, OFREP), one after the
   * other in the given order; the other keys are listed in `notFound`, in order too.
   */
  async assignMany(principal: Principal, keys: readonly string[], input: Omit<AssignInput, 'experiment_key'>): Promise<AssignedMany> {
    assertContextSize(input.context);
    const assigned: AssignedMany['assigned'] = [];
    const notFound: string[] = [];
    for (const key of keys) {
      const definition = await this.definitions.experiment(principal.workspaceId, key);
      if (refusal(definition, principal) !== null) {
        notFound.push(key);
        continue;
      }
      const usable = definition as ExperimentDefinition;
      assigned.push({ key, definition: usable, assignment: await this.assignIn(usable, input, principal.keyId) });
    }
    return { assigned, notFound };
  }

  /** `sourceKeyId`: the API key asking, recorded with the exposure a first assignment logs. */
  async assignIn(definition: ExperimentDefinition, input: Omit<AssignInput, 'experiment_key'>, sourceKeyId: string | null = null): Promise<Assignment> {
    return this.#withContacts(definition, input.unit_id, this.#fromMemory(definition, input) ?? this.#assignUncached(definition, input, sourceKeyId));
  }

  /** What memory could not answer (`#fromMemory` came first): the stored assignment, or a first one. */
  async #assignUncached(definition: ExperimentDefinition, input: Omit<AssignInput, 'experiment_key'>, sourceKeyId: string | null): Promise<Assignment> {
    // The stored assignment is read first, on the side connection (db/side-reads.ts). A miss is
    // most often a returning unit the cache no longer holds (more units than
    // VERDICT_STICKY_CACHE_SIZE, or one another process assigned), and one indexed read answers
    // it; the write path would queue it behind the event appends for SQLite's one write lock
    // (bench:soak at 340,000 units: 8 assigns in 10 missed, and each waited for the writer
    // thread). With an audience the stored assignment must be found first anyway: it wins over
    // today's audience. A held-out unit and a launched experiment store nothing: only the audience
    // is checked.
    const unstored = unstoredAnswer(definition, input.unit_id);
    if (unstored) return (await this.#inAudience(definition, input.context)) ? unstored : excluded(definition, input.unit_id);
    const known = await this.#stored(definition.id, input.unit_id);
    if (known) return present(definition.key, input.unit_id, known);
    if (!(await this.#inAudience(definition, input.context))) return excluded(definition, input.unit_id);
    // Only this miss path reads the dimensions: a sticky hit stays as cheap as before.
    const first = { logExposure: input.log_exposure !== false, dimensionValues: dimensionValuesOf(definition.dimensions, input.context), sourceKeyId };
    const stored = await this.#storeFirst(definition, input.unit_id, first);
    return present(definition.key, input.unit_id, stored);
  }

  #cached(experimentId: string, unitId: string): StoredAssignment | undefined {
    const cached = this.#sticky.get(experimentId, unitId);
    if (cached) this.#stickyStats.hit();
    else this.#stickyStats.miss();
    return cached;
  }

  /** The stored assignment, from the cache or else the database (and then cached). */
  async #stored(experimentId: string, unitId: string): Promise<StoredAssignment | undefined> {
    const cached = this.#cached(experimentId, unitId);
    if (cached) return cached;
    const row = await this.#lookup(experimentId, unitId);
    if (row) this.#sticky.set(experimentId, unitId, row);
    return row;
  }

  async #inAudience(definition: ExperimentDefinition, context: Record<string, unknown> | undefined): Promise<boolean> {
    if (!definition.audience) return true;
    const segments = definition.usesSegments ? await this.definitions.segmentRules(definition.workspaceId) : new Map();
    return evaluateAudience(definition.audience, context ?? {}, (key) => segments.get(key));
  }

  async #storeFirst(
    definition: ExperimentDefinition,
    unitId: string,
    details: Pick<FirstAssignment, 'logExposure' | 'dimensionValues' | 'sourceKeyId'>,
  ): Promise<StoredAssignment> {
    const variantKey = chooseVariant(definition.key, unitId, definition.variants).key;
    const first: FirstAssignment = { definition, unitId, variantKey, ...details };
    const result = await this.#firstWrites.submit(first);
    this.#sticky.set(definition.id, unitId, result);
    return result;
  }

  /**
   * Writes a group in one transaction (on the writer thread with SQLite: db/write-tasks.ts);
   * should it fail anyway (a deadlock, a serialization error), each item is retried in a
   * transaction of its own.
   */
  async #writeGroup(items: FirstAssignment[]): Promise<StoredAssignment[]> {
    const now = this.#ctx.clock.now();
    const writes = items.map(toWrite);
    try {
      return await this.#ctx.writes.run(writeFirstAssignments, { items: writes, now });
    } catch (error) {
      if (items.length === 1) throw error;
      return Promise.all(writes.map(async (item) => (await this.#ctx.writes.run(writeFirstAssignments, { items: [item], now }))[0] as StoredAssignment));
    }
  }

  /**
   * Records the exposure of an assignment made with log_exposure false. Repeats are accepted and
   * ignored; a variant other than the stored one is a conflict.
   */
  async logExposure(principal: Principal, input: ExposureInput): Promise<void> {
    const definition = await this.runningExperiment(principal, input.experiment_key);
    if (definition.overrides.has(input.unit_id)) return; // QA pins are kept out of the analysis
    if (unstoredAnswer(definition, input.unit_id)) return; // so are held-out units and launches
    const stored = await this.#stored(definition.id, input.unit_id);
    if (!stored) throw problems.unitNotAssigned(`unit "${input.unit_id}" has no assignment in "${input.experiment_key}"; call /v1/assign first`);
    if (stored.variant_key !== input.variant) {
      throw problems.assignedVariantDiffers(
        `unit "${input.unit_id}" is assigned ${stored.variant_key === null ? 'no variant (holdout)' : `"${stored.variant_key}"`}, not "${input.variant}"`,
      );
    }
    if (stored.exposure_logged_at !== null) return;
    const now = this.#ctx.clock.now();
    await this.#ctx.db.transaction().execute(async (trx) => {
      await insertExposure(trx, {
        workspaceId: definition.workspaceId,
        experimentId: definition.id,
        unitId: input.unit_id,
        variantKey: input.variant,
        at: now,
        source: 'api',
        sourceKeyId: principal.keyId,
      });
      await markExposureLogged(trx, stored.id, now);
    });
    this.#sticky.delete(definition.id, input.unit_id);
  }
}

export interface AssignedMany {
  assigned: Array<{ key: string; definition: ExperimentDefinition; assignment: Assignment }>;
  notFound: string[];
}

/**
 * The one rule for which experiments a key may assign in: running ones, and when the key is
 * bound to an environment, only that environment's. Null when it may.
 */
function refusal(definition: ExperimentDefinition | null, principal: Principal): 'not_running' | 'other_environment' | 'analysis_only' | null {
  if (!definition || !(definition.status === 'running' || definition.launchedVariantKey !== null)) return 'not_running';
  if (definition.analysisOnly) return 'analysis_only';
  if (principal.environmentId && definition.environmentId !== principal.environmentId) return 'other_environment';
  return null;
}

/** The 404 unless the definition is running in the key's environment. */
function runningIn(principal: Principal, key: string, definition: ExperimentDefinition | null): ExperimentDefinition {
  const refused = refusal(definition, principal);
  if (refused === 'not_running') throw problems.notFound(`no running experiment with key "${key}"`);
  if (refused === 'other_environment') throw problems.notFound(`no running experiment with key "${key}" in this key's environment`);
  if (refused === 'analysis_only')
    throw problems.notFound(
      `experiment "${key}" is assigned elsewhere (analysis-only): its exposures come from its assignment source, and Verdict assigns no unit in it`,
    );
  return definition as ExperimentDefinition;
}

/**
 * What a unit gets without a stored assignment: the control when a covering holdout holds it out
 * (checked first, so held-out units keep the status quo after a launch too), else the launched
 * variant of a launched experiment; undefined when neither applies. Pure and in memory: the
 * holdouts and the launch come with the cached definition.
 */
function unstoredAnswer(definition: ExperimentDefinition, unitId: string): Assignment | undefined {
  if (definition.holdouts.length > 0) {
    const holdout = holdingOut(definition.holdouts, unitId);
    if (holdout) return { experiment_key: definition.key, unit_id: unitId, variant: definition.control, reason: 'holdout', holdout_id: holdout.id };
  }
  if (definition.launchedVariantKey !== null)
    return { experiment_key: definition.key, unit_id: unitId, variant: definition.launchedVariantKey, reason: 'launched' };
  return undefined;
}

function excluded(definition: ExperimentDefinition, unitId: string): Assignment {
  return { experiment_key: definition.key, unit_id: unitId, variant: null, reason: 'audience_excluded' };
}

function present(experimentKey: string, unitId: string, stored: StoredAssignment): Assignment {
  return {
    experiment_key: experimentKey,
    unit_id: unitId,
    variant: stored.variant_key,
    reason: stored.reason,
    assignment_id: stored.id,
    exposure_logged_at: toIsoOrNull(stored.exposure_logged_at),
  };
}

export function assertContextSize(context: Record<string, unknown> | undefined): void {
  if (context && Buffer.byteLength(JSON.stringify(context)) > CONTEXT_LIMIT_BYTES) {
    throw problems.validation([{ pointer: '/context', message: `must be at most ${CONTEXT_LIMIT_BYTES} bytes of JSON` }]);
  }
}
