import { sql, type RawBuilder } from 'kysely';
import type { DialectName, DialectSeam } from '../../../db/dialect.js';

/**
 * How the analysis shapes its statements on each database: a choice of this slice (measured in
 * bench/analysis.ts), not a capability of the database, so it lives here rather than in the
 * dialect seam.
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
}

const SETTINGS: Record<DialectName, AnalysisDialectSettings> = {
  sqlite: { chunkUnits: 10_000, unitGroup: sql`x.unit_id, x.variant_key`, defaultMode: 'incremental' },
  postgres: { chunkUnits: null, unitGroup: sql`x.id`, defaultMode: 'incremental' },
};

export function analysisSettingsOf(seam: Pick<DialectSeam, 'name'>): AnalysisDialectSettings {
  return SETTINGS[seam.name];
}
