/**
 * What the analysis benchmarks (bench/analysis.ts, cuped.ts, breakdowns.ts) share: a context on
 * a scratch database, integer sequences and padded ids in SQL for bulk seeding, the four standard
 * metrics and a running two-arm experiment. Each benchmark seeds its own events on top.
 */
import path from 'node:path';
import os from 'node:os';
import { sql, type RawBuilder } from 'kysely';
import pino from 'pino';
import { loadConfig, type DatabaseConfig } from '../../src/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context.js';
import type { Insertable } from 'kysely';
import type { ExperimentsTable } from '../../src/db/tables/experiments.js';
import { newId } from '../../src/lib/ids.js';
import { createWorkspace } from '../../src/features/workspaces/service.js';

export const EVENTS_PER_UNIT = 5;
export const SEED_BATCH = 250_000;
export const DAY = 24 * 60 * 60 * 1000;
/** The start of bench:analysis's experiment: its units are exposed during the day after it. */
export const ANALYSIS_T0 = Date.UTC(2031, 0, 1);

/** A context on `database` whose clock stands at `now` (the seeded events' future), with `env` added to its configuration. */
export async function openBenchContext(
  database: DatabaseConfig,
  dataDir: string,
  migrate: boolean,
  now: number,
  env: Record<string, string> = {},
): Promise<AppContext> {
  const config = loadConfig({ VERDICT_DATA_DIR: dataDir, ...env }, { database, logLevel: 'silent' });
  return createContext(config, pino({ level: 'silent' }), { migrate, clock: { now: () => now } });
}

/** The same, from the URL (or SQLite file) a parent process hands its timing child. */
export async function openBenchContextAt(databaseUrl: string, now: number, env: Record<string, string> = {}): Promise<AppContext> {
  const config: DatabaseConfig = databaseUrl.startsWith('postgres') ? { kind: 'postgres', url: databaseUrl } : { kind: 'sqlite', file: databaseUrl };
  return openBenchContext(config, path.dirname(config.kind === 'sqlite' ? config.file : os.tmpdir()), false, now, env);
}

/** The configuration of events and analysis in the embedded ClickHouse engine at `directory`. */
export function embeddedClickHouse(directory: string): Record<string, string> {
  return { VERDICT_CLICKHOUSE_URL: `chdb:${directory}` };
}

/**
 * Integer sequence [from, to) as a row source `seq(n)`, per database. The seeding SQL inlines its
 * integers (sql.lit): SQLite would bind a JS number as REAL and turn n / units into a fraction.
 */
export function sequence(ctx: AppContext, from: number, to: number): RawBuilder<unknown> {
  return ctx.seam.name === 'postgres'
    ? sql`SELECT generate_series(${sql.lit(from)}::bigint, ${sql.lit(to - 1)}::bigint) AS n`
    : sql`WITH RECURSIVE s(n) AS (SELECT ${sql.lit(from)} UNION ALL SELECT n + 1 FROM s WHERE n + 1 < ${sql.lit(to)}) SELECT n FROM s`;
}

export function padded(ctx: AppContext, prefix: string, expression: RawBuilder<unknown>): RawBuilder<unknown> {
  return ctx.seam.name === 'postgres' ? sql`${prefix} || lpad((${expression})::text, 10, '0')` : sql`printf(${prefix + '%010d'}, ${expression})`;
}

/** A metric row as the catalogue stores it (no capping, higher is better). */
export function benchMetric(
  workspaceId: string,
  at: number,
  key: string,
  eventKey: string,
  kind: string,
  aggregation: string,
  propertyPath: string | null,
  windowMs: number,
) {
  return {
    id: newId(),
    workspace_id: workspaceId,
    key,
    name: key,
    event_key: eventKey,
    kind: kind as never,
    aggregation: aggregation as never,
    unit_dedup_window: `P${windowMs / DAY}D`,
    unit_dedup_window_ms: windowMs,
    property_path: propertyPath,
    created_at: at,
    updated_at: at,
    description: null,
    higher_is_better: 1,
    capping: null as string | null,
    numerator_metric_id: null as string | null,
    denominator_metric_id: null as string | null,
  };
}

/** The four metrics every analysis benchmark measures: binary, revenue sum, duration mean, count. */
export function standardMetrics(workspaceId: string, at: number) {
  return [
    benchMetric(workspaceId, at, 'purchased', 'purchase', 'binary', 'count', null, 7 * DAY),
    benchMetric(workspaceId, at, 'revenue', 'purchase', 'revenue', 'sum', 'order.total', 7 * DAY),
    benchMetric(workspaceId, at, 'load_time', 'page_load', 'duration', 'mean', 'timing.load_ms', DAY),
    benchMetric(workspaceId, at, 'pageviews', 'page_load', 'count', 'count', null, 7 * DAY),
  ];
}

/** A running 50/50 experiment started at `at`, with the default decision rule; returns its id. */
export async function insertRunningExperiment(
  ctx: AppContext,
  scope: { workspaceId: string; environmentId: string; at: number; primary: string | undefined; guardrails: string[] },
  fields: Partial<Insertable<ExperimentsTable>> = {},
): Promise<string> {
  const id = newId();
  const { workspaceId, environmentId, at, primary, guardrails } = scope;
  await ctx.db
    .insertInto('experiments')
    .values({
      id,
      workspace_id: workspaceId,
      environment_id: environmentId,
      key: 'bench',
      name: 'Bench',
      hypothesis: 'h',
      unit_type: 'user',
      status: 'running',
      audience: null,
      mutex_group_id: null,
      weights_changed: 0,
      variants: JSON.stringify([
        { id: newId(), key: 'control', weight: 50, is_control: true },
        { id: newId(), key: 'treatment', weight: 50, is_control: false },
      ]),
      decision_rule: JSON.stringify({
        method: 'bayesian.posterior_threshold',
        posterior_threshold: 0.995,
        minimum_detectable_effect: 0.02,
        min_sample_per_variant: 20000,
        max_duration_days: 28,
        snapshot_cadence_minutes: 240,
      }),
      primary_metric_id: primary ?? null,
      guardrail_metric_ids: JSON.stringify(guardrails),
      started_at: at,
      stopped_at: null,
      stop_reason: null,
      outcome_notes: null,
      created_at: at,
      updated_at: at,
      ...fields,
    })
    .execute();
  return id;
}

export interface AnalysisDefinitions {
  workspaceId: string;
  experimentId: string;
  /** The standard guardrails, then a p99-capped revenue and a ratio (not in the experiment's list until a measurement adds them). */
  extraGuardrails: string[];
}

/** bench:analysis's workspace, four metrics (binary, revenue sum, duration mean, count) and a running experiment started at `t0`. */
export async function seedAnalysisDefinitions(ctx: AppContext, t0: number): Promise<AnalysisDefinitions> {
  const { workspace, environment } = await createWorkspace(ctx, `Bench ${newId()}`);
  const metrics = standardMetrics(workspace.id, t0);
  // Added as guardrails for the second measurement: revenue capped at its 99th percentile (the
  // usual use of capping: a few very large orders) and a ratio, revenue per pageview.
  const capped = {
    ...benchMetric(workspace.id, t0, 'revenue_p99', 'purchase', 'revenue', 'sum', 'order.total', 7 * DAY),
    capping: JSON.stringify({ type: 'percentile', value: 0.99 }),
  };
  const ratio = {
    ...benchMetric(workspace.id, t0, 'revenue_per_pageview', '', 'ratio', 'sum', null, 7 * DAY),
    numerator_metric_id: metrics[1]?.id ?? null,
    denominator_metric_id: metrics[3]?.id ?? null,
  };
  await ctx.db
    .insertInto('metrics')
    .values([...metrics, capped, ratio])
    .execute();
  const [primary, ...guardrails] = metrics.map((m) => m.id);
  const experimentId = await insertRunningExperiment(ctx, { workspaceId: workspace.id, environmentId: environment.id, at: t0, primary, guardrails });
  return { workspaceId: workspace.id, experimentId, extraGuardrails: [...guardrails, capped.id, ratio.id] };
}
