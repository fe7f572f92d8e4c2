/**
 * The experiments slice's read model: what other slices (assignment, OFREP, analysis) may know
 * of an experiment, and the one mapping from a stored row to the domain (its variants, decision
 * rule and the rest parsed from their JSON columns). Other slices import this file, never
 * store.ts.
 */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { ExperimentsTable } from '../../db/tables/experiments.js';
import { ULID_PATTERN } from '../../lib/ids.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import { parseAllocation, parsePeriods } from './allocation.js';
import { parseTags, toOwner } from './labels.js';
import { parseMultipleTesting, parseSecondaryMetricIds } from './multiple-testing.js';
import { normalizeAutoStop, withDefaults } from './rules.js';
import type { AutoStop, DecisionRule, Experiment, Variant, VarianceReduction } from './schemas.js';
import { experimentWarnings } from './warnings.js';

export type ExperimentRow = Selectable<ExperimentsTable>;
export type { AutoStop, DecisionRule, Experiment, Variant } from './schemas.js';

/** The stored variants, in their stored order (part of the bucketing rule). */
export function parseVariants(stored: string): Variant[] {
  return JSON.parse(stored) as Variant[];
}

/** The stored decision rule, with the defaults filled in for any field it lacks. */
export function parseDecisionRule(stored: string): DecisionRule {
  return withDefaults(JSON.parse(stored) as Partial<DecisionRule>);
}

/** The stored audience expression tree (validated when it was saved), or null for everyone. */
export function parseAudience(stored: string | null): Record<string, unknown> | null {
  return stored === null ? null : (JSON.parse(stored) as Record<string, unknown>);
}

/** The stored auto-stop switches (null: all off). */
export function parseAutoStop(stored: string | null | undefined): AutoStop {
  return normalizeAutoStop(stored ? (JSON.parse(stored) as AutoStop) : null);
}

/** The stored dimension names (attributes whose values a first assignment keeps). */
export function parseDimensions(stored: string): string[] {
  return JSON.parse(stored) as string[];
}

export function toExperiment(row: ExperimentRow): Experiment {
  const variants = parseVariants(row.variants);
  const decisionRule = parseDecisionRule(row.decision_rule);
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    environment_id: row.environment_id,
    key: row.key,
    name: row.name,
    hypothesis: row.hypothesis,
    unit_type: row.unit_type as Experiment['unit_type'],
    status: row.status,
    variants,
    audience: parseAudience(row.audience),
    decision_rule: decisionRule,
    primary_metric_id: row.primary_metric_id,
    guardrail_metric_ids: JSON.parse(row.guardrail_metric_ids) as string[],
    secondary_metric_ids: parseSecondaryMetricIds(row.secondary_metric_ids),
    multiple_testing: parseMultipleTesting(row.multiple_testing),
    mutex_group_id: row.mutex_group_id,
    variance_reduction: row.variance_reduction === null ? null : (JSON.parse(row.variance_reduction) as VarianceReduction),
    dimensions: parseDimensions(row.dimensions),
    allocation: parseAllocation(row.allocation),
    allocation_periods: parsePeriods(row.allocation_periods).map((period) => ({ ...period, started_at: toIso(period.started_at) })),
    auto_stop: parseAutoStop(row.auto_stop),
    tags: parseTags(row.tags),
    owner: toOwner(row.owner_user_id, row.owner_name),
    assignment_source_id: row.assignment_source_id ?? null,
    assignment_experiment_key: row.assignment_experiment_key ?? null,
    weights_changed_since_start: row.weights_changed === 1,
    started_at: toIsoOrNull(row.started_at),
    stopped_at: toIsoOrNull(row.stopped_at),
    stop_reason: row.stop_reason as Experiment['stop_reason'],
    outcome_notes: row.outcome_notes,
    stopped_by: row.stopped_by as Experiment['stopped_by'],
    stop_snapshot_id: row.stop_snapshot_id,
    launched_variant_key: row.launched_variant_key,
    launched_at: toIsoOrNull(row.launched_at),
    launch_reason: row.launch_reason,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    warnings: experimentWarnings(decisionRule, variants, { status: row.status }),
  };
}

export async function findExperiment(executor: Executor, workspaceId: string, id: string): Promise<ExperimentRow | undefined> {
  return executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findExperimentByKey(executor: Executor, workspaceId: string, key: string): Promise<ExperimentRow | undefined> {
  return executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
}

/** An experiment named by id or by key: a ULID never matches the key pattern, so there is no ambiguity. */
export async function findExperimentByIdOrKey(executor: Executor, workspaceId: string, idOrKey: string) {
  return ULID_PATTERN.test(idOrKey) ? findExperiment(executor, workspaceId, idOrKey) : findExperimentByKey(executor, workspaceId, idOrKey);
}

/** Reads the row and holds it until the transaction ends, so lifecycle changes do not interleave. */
export async function lockExperiment(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<ExperimentRow | undefined> {
  const query = executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  return seam.forUpdate(query).executeTakeFirst();
}

/** An experiment by id alone: for the background job and the CLI, which act for no workspace. */
export async function findExperimentById(executor: Executor, id: string): Promise<ExperimentRow | undefined> {
  return executor.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Keys of the experiments that answer assignments (running ones, and stopped ones with a
 * launched variant) a key can see (its environment's, or all when unbound), at most 500: the
 * candidates OFREP evaluates, each then checked by the Assigner's one rule.
 */
export async function listRunningExperimentKeys(executor: Executor, workspaceId: string, environmentId: string | null): Promise<string[]> {
  let query = executor
    .selectFrom('experiments')
    .select('key')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'stopped'), eb('launched_variant_key', 'is not', null)])]));
  if (environmentId) query = query.where('environment_id', '=', environmentId);
  const rows = await query.orderBy('key').limit(500).execute();
  return rows.map((row) => row.key);
}

/** Draft or running experiments that use the metric as primary, guardrail or secondary metric (what keeps it from being deleted). */
export async function findExperimentsUsingMetric(executor: Executor, workspaceId: string, metricId: string): Promise<Array<{ id: string; key: string }>> {
  const rows = await executor
    .selectFrom('experiments')
    .select(['id', 'key', 'primary_metric_id', 'guardrail_metric_ids', 'secondary_metric_ids'])
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', ['draft', 'running'])
    // A cheap prefilter; the JSON array is checked exactly below.
    .where((eb) =>
      eb.or([eb('primary_metric_id', '=', metricId), eb('guardrail_metric_ids', 'like', `%${metricId}%`), eb('secondary_metric_ids', 'like', `%${metricId}%`)]),
    )
    .orderBy('id')
    .execute();
  const uses = (row: (typeof rows)[number]) =>
    row.primary_metric_id === metricId ||
    (JSON.parse(row.guardrail_metric_ids) as string[]).includes(metricId) ||
    parseSecondaryMetricIds(row.secondary_metric_ids).includes(metricId);
  return rows.filter(uses).map((row) => ({ id: row.id, key: row.key }));
}

/** The audiences (stored JSON text) of the workspace's non-archived experiments that have one, by id. */
export async function listExperimentAudiences(executor: Executor, workspaceId: string): Promise<Array<{ id: string; key: string; audience: string | null }>> {
  return executor
    .selectFrom('experiments')
    .select(['id', 'key', 'audience'])
    .where('workspace_id', '=', workspaceId)
    .where('status', '!=', 'archived')
    .where('audience', 'is not', null)
    .orderBy('id')
    .execute();
}

/** What the analysis scheduler needs of an experiment to tell whether a snapshot is due. */
export type AnalysableExperiment = Pick<ExperimentRow, 'id' | 'workspace_id' | 'status' | 'decision_rule' | 'stopped_at'>;

/** Running experiments, and experiments that ran and stopped (or were archived) since `stoppedSince`, by id. */
export async function listAnalysableExperiments(executor: Executor, stoppedSince: number): Promise<AnalysableExperiment[]> {
  return executor
    .selectFrom('experiments as e')
    .select(['e.id', 'e.workspace_id', 'e.status', 'e.decision_rule', 'e.stopped_at'])
    .where((eb) =>
      eb.or([
        eb('e.status', '=', 'running'),
        eb.and([eb('e.status', 'in', ['stopped', 'archived']), eb('e.stopped_at', '>=', stoppedSince), eb('e.started_at', 'is not', null)]),
      ]),
    )
    .orderBy('e.id')
    .execute();
}

/** Non-archived experiments per mutex group, for the given groups (a group without any is absent). */
export async function countExperimentsInMutexGroups(executor: Executor, groupIds: readonly string[]): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map();
  const rows = await executor
    .selectFrom('experiments')
    .select((eb) => ['mutex_group_id', eb.fn.countAll<number>().as('experiments')])
    .where('mutex_group_id', 'in', [...groupIds])
    .where('status', '!=', 'archived')
    .groupBy('mutex_group_id')
    .execute();
  return new Map(rows.map((row) => [row.mutex_group_id as string, Number(row.experiments)]));
}

/** Running experiments whose allocation is a bandit (the reweighting scheduler's candidates). */
export async function listRunningBandits(executor: Executor): Promise<ExperimentRow[]> {
  const rows = await executor
    .selectFrom('experiments')
    .selectAll()
    .where('status', '=', 'running')
    .where('allocation', 'like', '%"type":"bandit"%')
    .orderBy('id')
    .execute();
  return rows.filter((row) => parseAllocation(row.allocation).type === 'bandit');
}
