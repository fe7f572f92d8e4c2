/**
 * The base `bench:soak` loads on top of: three running experiments sharing the same units, each
 * unit assigned and exposed in all three, and their events, written straight into the server's
 * SQLite file before the server starts (seeding through the API would take longer than the soak).
 */
import { sql, type RawBuilder } from 'kysely';
import type { AppContext } from '../../src/context.js';
import { DAY, insertRunningExperiment, openBenchContext, padded, SEED_BATCH, sequence, standardMetrics } from './analysis-seed.js';

export const SOAK_EXPERIMENTS = ['soak-a', 'soak-b', 'soak-c'];
/** How long before the soak the experiments started; exposures are spread over this span but its last day. */
const SPAN_MS = 14 * DAY;

export interface SoakBase {
  workspaceId: string;
  /** Experiment ids, in SOAK_EXPERIMENTS order. */
  experimentIds: string[];
}

export interface SoakSeedOptions {
  dataDir: string;
  workspaceId: string;
  units: number;
  events: number;
  now: number;
}

/** Seeded unit n's id; the load asks for the same ids. */
export const seededUnit = (n: number) => `u${String(n).padStart(10, '0')}`;

export async function seedSoakBase(options: SoakSeedOptions): Promise<SoakBase> {
  const ctx = await openBenchContext({ kind: 'sqlite', file: `${options.dataDir}/verdict.sqlite` }, options.dataDir, true, options.now);
  try {
    const start = options.now - SPAN_MS;
    const environment = await ctx.db.selectFrom('environments').select('id').where('workspace_id', '=', options.workspaceId).executeTakeFirstOrThrow();
    const metrics = standardMetrics(options.workspaceId, start);
    await ctx.db.insertInto('metrics').values(metrics).execute();
    const [primary, ...guardrails] = metrics.map((metric) => metric.id);
    const experimentIds: string[] = [];
    for (const key of SOAK_EXPERIMENTS) {
      const scope = { workspaceId: options.workspaceId, environmentId: environment.id, at: start, primary, guardrails };
      experimentIds.push(await insertRunningExperiment(ctx, scope, { key, name: key }));
    }
    for (const [index, experimentId] of experimentIds.entries()) await seedUnits(ctx, options, experimentId, index, start);
    await seedEvents(ctx, options, start);
    await sql`ANALYZE`.execute(ctx.db);
    // The WAL of the seeding would otherwise be checkpointed by the server during the first window.
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(ctx.db);
    return { workspaceId: options.workspaceId, experimentIds };
  } finally {
    await ctx.close();
  }
}

const exposedAt = (start: number, n: RawBuilder<unknown>) => sql`(${sql.lit(start)} + ((${n}) * 7919 % ${sql.lit((SPAN_MS - DAY) / 1000)}) * 1000)`;

/** Every unit's assignment and first exposure in one experiment (control for even units). */
async function seedUnits(ctx: AppContext, options: SoakSeedOptions, experimentId: string, index: number, start: number): Promise<void> {
  for (let from = 0; from < options.units; from += SEED_BATCH) {
    const rows = sequence(ctx, from, Math.min(options.units, from + SEED_BATCH));
    const n = sql.ref('seq.n');
    const variant = sql`CASE WHEN ${n} % 2 = 0 THEN 'control' ELSE 'treatment' END`;
    await sql`INSERT INTO assignments (id, workspace_id, experiment_id, unit_id, variant_key, reason, exposure_logged_at, created_at, dimension_values)
      SELECT ${padded(ctx, `00SA${index}`, n)}, ${options.workspaceId}, ${experimentId}, ${padded(ctx, 'u', n)}, ${variant}, 'bucketed',
        ${exposedAt(start, n)}, ${exposedAt(start, n)}, NULL
      FROM (${rows}) AS seq`.execute(ctx.db);
    await sql`INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source)
      SELECT ${padded(ctx, `00SX${index}`, n)}, ${options.workspaceId}, ${experimentId}, ${padded(ctx, 'u', n)}, ${variant}, ${exposedAt(start, n)}, NULL, 'assign'
      FROM (${rows}) AS seq`.execute(ctx.db);
  }
}

/** Events spread over the units: page loads mostly, a purchase for one in ten. */
async function seedEvents(ctx: AppContext, options: SoakSeedOptions, start: number): Promise<void> {
  for (let from = 0; from < options.events; from += SEED_BATCH) {
    const n = sql.ref('seq.n');
    const unit = sql`(${n} % ${sql.lit(options.units)})`;
    const occurred = sql`${exposedAt(start, unit)} + (${n} / ${sql.lit(options.units)} + 1) * 60000`;
    await sql`INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late, client_event_id)
      SELECT ${padded(ctx, '00SE', n)}, ${options.workspaceId}, ${padded(ctx, 'u', unit)},
        CASE WHEN ${n} % 10 = 9 THEN 'purchase' ELSE 'page_load' END,
        CASE WHEN ${n} % 10 = 9 THEN '{"order":{"total":' || (10 + ${n} % 90) || '.5}}' ELSE '{"timing":{"load_ms":' || (100 + ${n} % 200) || '}}' END,
        ${occurred}, ${occurred} + 1000, 0, NULL
      FROM (${sequence(ctx, from, Math.min(options.events, from + SEED_BATCH))}) AS seq`.execute(ctx.db);
  }
}
