import { sql, type RawBuilder } from 'kysely';
import type { DialectName, DialectSeam } from '../../../db/dialect.js';

/**
 * How the SQL store shapes its statements and transactions on each database: choices of the
 * analysis (measured in bench/analysis.ts and bench/incremental.ts), not capabilities of the
 * database, so they live here rather than in the dialect seam. Every fork of the SQL store between
 * SQLite and PostgreSQL reads one of these; none asks the dialect's name.
 */
export interface AnalysisDialectSettings {
  /**
   * Units per analysis statement, or null for one statement per experiment. SQLite statements
   * are synchronous, so the work is cut into chunks that the read threads share (and that never
   * hold a connection for long); PostgreSQL plans one statement over the whole experiment best
   * and parallelises it itself.
   */
  readonly chunkUnits: number | null;
  /**
   * What the analysis groups joined events by to get one row per unit (exposures `x`). SQLite
   * reads exposures in unit_id order from the live-exposure index, so grouping on unit_id
   * streams; PostgreSQL hash-aggregates, and one short key (the exposure's primary key, on
   * which variant_key and exposed_at depend) hashes faster than two.
   */
  readonly unitGroup: RawBuilder<unknown>;
  /**
   * The computation a snapshot gets when none is asked for: incremental on both. (On SQLite a
   * refresh that builds every unit goes in short steps, sql/rollup/steps.ts, so it never holds the
   * API's one connection for long.)
   */
  readonly defaultMode: 'incremental' | 'full';
  /** Starts the statement creating a refresh's scratch table (PostgreSQL drops it at the commit; SQLite keeps it on the connection until dropped). */
  createScratch(table: string): RawBuilder<unknown>;
  /** A scratch table's name qualified by the connection's temporary schema. */
  scratchName(table: string): RawBuilder<unknown>;
  /**
   * Whether a refresh's joins of new events to their units are ordered by CROSS JOIN (SQLite: each
   * event's unit by primary key) rather than looked up once per distinct unit and hashed
   * (PostgreSQL, sql/rollup/fresh.ts and touched.ts say why).
   */
  readonly crossJoinsUnits: boolean;
  /**
   * Statements around the statement that stages the new events (sql/rollup/fresh.ts). PostgreSQL
   * joins the new events to their distinct units by hash with nested loops off: both lists'
   * estimates may say one row when the new events lie beyond the table's statistics, and a
   * nested loop of the two then grows with the square of the new events.
   */
  readonly aroundStaging: { readonly before: readonly RawBuilder<unknown>[]; readonly after: readonly RawBuilder<unknown>[] };
  /** Whether the staged new events get a unique index on unit_id (SQLite scanned the whole table per touched unit without it). */
  readonly indexesStagedUnits: boolean;
  /**
   * Statements that give a refresh an empty list of the units it touches (sql/rollup/totals.ts). SQLite
   * empties the experiment's rows of the shared analysis_rollup_touched; PostgreSQL creates a
   * temporary table of that name for the transaction, which the temporary schema puts before the
   * shared one: writing the list into the shared table and its index (about 2 WAL records per
   * unit) cost more than reading it.
   */
  touchedList(experimentId: string): readonly RawBuilder<unknown>[];
  /** Statements that start an incremental refresh's transaction (PostgreSQL: no JIT, a larger work_mem for its sorts). */
  readonly refreshSession: readonly RawBuilder<unknown>[];
  /**
   * Where a refresh runs: `writer` (SQLite) as write tasks on the writer thread, a first build in
   * short steps and new events in rounds (sql/rollup/steps.ts, rounds.ts); `locked` (PostgreSQL)
   * as one repeatable-read transaction under the experiment's advisory lock.
   */
  readonly refreshRuns: 'writer' | 'locked';
}

const SETTINGS: Record<DialectName, AnalysisDialectSettings> = {
  sqlite: {
    chunkUnits: 10_000,
    unitGroup: sql`x.unit_id, x.variant_key`,
    defaultMode: 'incremental',
    createScratch: (table) => sql`CREATE TEMPORARY TABLE ${sql.raw(table)}`,
    scratchName: (table) => sql.raw(`temp.${table}`),
    crossJoinsUnits: true,
    aroundStaging: { before: [], after: [] },
    indexesStagedUnits: true,
    touchedList: (experimentId) => [sql`DELETE FROM analysis_rollup_touched WHERE experiment_id = ${experimentId}`],
    refreshSession: [],
    refreshRuns: 'writer',
  },
  postgres: {
    chunkUnits: null,
    unitGroup: sql`x.id`,
    defaultMode: 'incremental',
    createScratch: (table) => sql`CREATE TEMPORARY TABLE ${sql.raw(table)} ON COMMIT DROP`,
    scratchName: (table) => sql.raw(`pg_temp.${table}`),
    crossJoinsUnits: false,
    aroundStaging: { before: [sql`SET LOCAL enable_nestloop = off`], after: [sql`SET LOCAL enable_nestloop TO DEFAULT`] },
    indexesStagedUnits: false,
    touchedList: () => [
      sql`DROP TABLE IF EXISTS pg_temp.analysis_rollup_touched`,
      sql`CREATE TEMPORARY TABLE analysis_rollup_touched (experiment_id text NOT NULL, unit_id text NOT NULL) ON COMMIT DROP`,
    ],
    refreshSession: [sql`SET LOCAL jit = off`, sql`SET LOCAL work_mem = '64MB'`],
    refreshRuns: 'locked',
  },
};

export function analysisSettingsOf(seam: Pick<DialectSeam, 'name'>): AnalysisDialectSettings {
  return SETTINGS[seam.name];
}
