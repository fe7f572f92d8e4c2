/**
 * Names beside ids in the `source` breakdown: each value is an API key's id, and a person reads
 * the key's name. Looked up when the snapshot is computed, so the stored snapshot carries the
 * name the key had then and no reader needs a second request.
 */
import { apiKeyNames } from '../api-keys/read.js';
import type { AnalysisDeps } from './deps.js';
import { NONE_LABEL, OTHER_LABEL } from './compute/breakdowns.js';
import type { Breakdown } from './schemas.js';

export const SOURCE_DIMENSION = 'source';

export async function labelSources(ctx: Pick<AnalysisDeps, 'db'>, workspaceId: string, breakdowns: readonly Breakdown[]): Promise<Breakdown[]> {
  const ids = breakdowns
    .filter((breakdown) => breakdown.dimension === SOURCE_DIMENSION)
    .flatMap((breakdown) => breakdown.values.map((value) => value.value))
    .filter((value) => value !== OTHER_LABEL && value !== NONE_LABEL);
  const names = await apiKeyNames(ctx.db, workspaceId, ids);
  return breakdowns.map((breakdown) =>
    breakdown.dimension !== SOURCE_DIMENSION
      ? breakdown
      : { ...breakdown, values: breakdown.values.map((value) => ({ ...value, label: names.get(value.value) ?? value.value })) },
  );
}
