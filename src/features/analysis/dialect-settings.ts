import { sql, type RawBuilder } from 'kysely';
import type { DialectName, DialectSeam } from '../../db/dialect.js';

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
   * The computation a snapshot gets when none is asked for. On SQLite an incremental refresh
   * writes its rollups in one write transaction on the process's one connection, which holds the
   * API's database work and the event writer for the whole refresh (seconds at 200,000 units,
   * about a minute for a first build at 1M), while a full computation only reads, on the read
   * threads. Until the refresh runs in chunks off that connection, SQLite stays on `full`.
   */
  readonly defaultMode: 'incremental' | 'full';
}

const SETTINGS: Record<DialectName, AnalysisDialectSettings> = {
  sqlite: { chunkUnits: 10_000, unitGroup: sql`x.unit_id, x.variant_key`, defaultMode: 'full' },
  postgres: { chunkUnits: null, unitGroup: sql`x.id`, defaultMode: 'incremental' },
};

export function analysisSettingsOf(seam: Pick<DialectSeam, 'name'>): AnalysisDialectSettings {
  return SETTINGS[seam.name];
}
