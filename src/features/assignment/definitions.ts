import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.js';
import type { CacheStats } from '../../observability/metrics.js';
import type { ExperimentStatus } from '../../db/tables/experiments.js';
import { findExperimentByKey, parseAudience, parseDimensions, parseVariants, type Variant } from '../experiments/read.js';
import type { HoldoutRule } from '../holdouts/membership.js';
import { holdoutRulesFor } from '../holdouts/read.js';
import { loadSegmentRules } from '../segments/read.js';
import { collectSegmentKeys, type AudienceExpression } from './audience.js';
import { loadOverrides } from './store.js';

/** What assignment needs to know about an experiment, parsed once and cached. */
export interface ExperimentDefinition {
  id: string;
  workspaceId: string;
  environmentId: string;
  key: string;
  status: ExperimentStatus;
  variants: Variant[];
  audience: AudienceExpression | null;
  usesSegments: boolean;
  mutexGroupId: string | null;
  /** Attribute names whose context values a first assignment stores (breakdowns). */
  dimensions: string[];
  /** QA pins: unit id -> variant key. */
  overrides: Map<string, string>;
  /** The control variant's key: what a held-out unit gets. */
  control: string;
  /** A stopped experiment's launched variant, served to every unit (reason "launched"); else null. */
  launchedVariantKey: string | null;
  /** The running holdouts covering it (empty when it opted out), checked before any assignment. */
  holdouts: HoldoutRule[];
  /** Assigned elsewhere (an assignment source gives its exposures): Verdict assigns no unit in it. */
  analysisOnly: boolean;
}

/** The database (experiments, segments, overrides), the change feed and the cache counters. */
export type DefinitionDeps = Pick<AppContext, 'db' | 'changes' | 'metrics'>;

const MISSING = Symbol('missing');
type Cached = ExperimentDefinition | typeof MISSING;

/**
 * In-process caches of experiment definitions and segment rules. Entries live a few seconds
 * (bounding staleness across processes) and are dropped at once when this process hears of a
 * change. Unknown keys are cached too, so a flood of bad keys does not reach the database.
 */
export class DefinitionCache {
  readonly #ctx: DefinitionDeps;
  readonly #experiments: LRUCache<string, { value: Cached }>;
  readonly #segments: LRUCache<string, Map<string, AudienceExpression | null>>;
  readonly #experimentStats: CacheStats;
  readonly #segmentStats: CacheStats;

  constructor(ctx: DefinitionDeps, ttlMs: number) {
    this.#ctx = ctx;
    this.#experimentStats = ctx.metrics.cache('experiment_definitions');
    this.#segmentStats = ctx.metrics.cache('segment_rules');
    this.#experiments = new LRUCache({ max: 50_000, ttl: Math.max(ttlMs, 1) });
    this.#segments = new LRUCache({ max: 10_000, ttl: Math.max(ttlMs, 1) });
    ctx.changes.subscribe((change) => {
      if (change.topic === 'experiment') for (const key of change.keys) this.#experiments.delete(cacheKey(change.workspaceId, key));
      if (change.topic === 'segment') this.#segments.delete(change.workspaceId);
      if (change.topic === 'holdout') this.#dropWorkspace(change.workspaceId);
    });
  }

  /**
   * The cached definition (null: cached as unknown), or undefined when it must be loaded. Counts
   * a hit only, so a caller that falls back to `experiment()` is counted once, as a miss there.
   */
  cachedExperiment(workspaceId: string, key: string): ExperimentDefinition | null | undefined {
    const hit = this.#experiments.get(cacheKey(workspaceId, key));
    if (!hit) return undefined;
    this.#experimentStats.hit();
    return hit.value === MISSING ? null : hit.value;
  }

  async experiment(workspaceId: string, key: string): Promise<ExperimentDefinition | null> {
    const id = cacheKey(workspaceId, key);
    const hit = this.#experiments.get(id);
    if (hit) {
      this.#experimentStats.hit();
      return hit.value === MISSING ? null : hit.value;
    }
    this.#experimentStats.miss();
    const loaded = await this.#load(workspaceId, key);
    this.#experiments.set(id, { value: loaded ?? MISSING });
    return loaded;
  }

  /** Drops every cached definition of a workspace (a holdout change may touch any of them). */
  #dropWorkspace(workspaceId: string): void {
    const prefix = cacheKey(workspaceId, '');
    for (const key of [...this.#experiments.keys()]) if (key.startsWith(prefix)) this.#experiments.delete(key);
  }

  async segmentRules(workspaceId: string): Promise<Map<string, AudienceExpression | null>> {
    const hit = this.#segments.get(workspaceId);
    if (hit) {
      this.#segmentStats.hit();
      return hit;
    }
    this.#segmentStats.miss();
    const rules = await loadSegmentRules(this.#ctx.db, workspaceId);
    this.#segments.set(workspaceId, rules);
    return rules;
  }

  async #load(workspaceId: string, key: string): Promise<ExperimentDefinition | null> {
    const row = await findExperimentByKey(this.#ctx.db, workspaceId, key);
    if (!row) return null;
    const audience = parseAudience(row.audience) as AudienceExpression | null;
    const variants = parseVariants(row.variants);
    const live = row.status === 'running' || row.status === 'stopped';
    return {
      id: row.id,
      workspaceId,
      environmentId: row.environment_id,
      key: row.key,
      status: row.status,
      variants,
      audience,
      usesSegments: collectSegmentKeys(audience).length > 0,
      mutexGroupId: row.mutex_group_id,
      dimensions: parseDimensions(row.dimensions),
      overrides: row.status === 'archived' ? new Map() : await loadOverrides(this.#ctx.db, row.id),
      control: (variants.find((variant) => variant.is_control) ?? variants[0])?.key ?? '',
      launchedVariantKey: row.status === 'stopped' ? row.launched_variant_key : null,
      holdouts: live ? await holdoutRulesFor(this.#ctx.db, row) : [],
      analysisOnly: row.assignment_source_id !== null && row.assignment_source_id !== undefined,
    };
  }
}

function cacheKey(workspaceId: string, key: string): string {
  return `${workspaceId}\u0000${key}`;
}
