import type { AppContext } from '../../context.js';
import { uniqueViolationAs } from '../../db/dialect.js';
import { problems, type FieldError } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/store.js';
import { DEFAULT_DEDUP_WINDOW, parseDedupWindow } from './dedup-window.js';
import { propertyPathProblem } from './property-path.js';
import type { MetricInput } from './schemas.js';
import { findMetric, insertMetric, toMetric, type MetricRow } from './store.js';

/** A metric input after defaults, with its window already in milliseconds. */
export interface ResolvedMetric {
  key: string;
  name: string;
  event_key: string;
  kind: MetricRow['kind'];
  aggregation: MetricRow['aggregation'];
  unit_dedup_window: string;
  unit_dedup_window_ms: number;
  property_path: string | null;
}

/**
 * The rules the schema cannot express (docs/metrics.md explains each):
 * - the window is a fixed-length ISO 8601 duration from PT1S to P365D;
 * - property_path is the restricted JSON-path subset;
 * - a binary metric only counts (a unit converted or not), so it takes no sum or mean;
 * - sum and mean aggregate a number, so they need property_path; count ignores numbers, so a
 *   property_path there would silently do nothing and is refused;
 * - revenue and duration are amounts: counting their events would report the number of
 *   purchases as revenue, so they need sum or mean.
 */
export function resolveMetricInput(input: MetricInput): { metric: ResolvedMetric } | { errors: FieldError[] } {
  const aggregation = input.aggregation ?? 'count';
  const window = input.unit_dedup_window ?? DEFAULT_DEDUP_WINDOW;
  const propertyPath = input.property_path ?? null;
  const parsedWindow = parseDedupWindow(window);
  const errors: FieldError[] = [];
  if (!parsedWindow.ok) errors.push({ pointer: '/unit_dedup_window', message: parsedWindow.message });
  const aggregationProblem = aggregationProblemFor(input.kind, aggregation);
  if (aggregationProblem) {
    // The property_path rules depend on the aggregation; judging them against a refused one misleads.
    errors.push({ pointer: '/aggregation', message: aggregationProblem });
  } else {
    const pathProblem = propertyPathProblemFor(aggregation, propertyPath);
    if (pathProblem) errors.push({ pointer: '/property_path', message: pathProblem });
  }
  if (errors.length > 0 || !parsedWindow.ok) return { errors };
  return {
    metric: {
      key: input.key,
      name: input.name,
      event_key: input.event_key,
      kind: input.kind,
      aggregation,
      unit_dedup_window: window,
      unit_dedup_window_ms: parsedWindow.ms,
      property_path: propertyPath,
    },
  };
}

function aggregationProblemFor(kind: MetricRow['kind'], aggregation: MetricRow['aggregation']): string | null {
  if (kind === 'binary' && aggregation !== 'count') {
    return `a binary metric counts whether a unit converted; ${aggregation} needs a count, revenue or duration metric`;
  }
  if ((kind === 'revenue' || kind === 'duration') && aggregation === 'count') {
    return `a ${kind} metric measures an amount: use sum or mean with a property_path (aggregation defaults to count)`;
  }
  return null;
}

function propertyPathProblemFor(aggregation: MetricRow['aggregation'], propertyPath: string | null): string | null {
  if (aggregation === 'count') {
    return propertyPath === null ? null : 'count does not read event properties; remove property_path or aggregate with sum or mean';
  }
  if (propertyPath === null) return `${aggregation} aggregates a number from each event; name the property holding it`;
  return propertyPathProblem(propertyPath);
}

export async function createMetric(ctx: AppContext, workspaceId: string, actorId: string, input: MetricInput) {
  const resolved = resolveMetricInput(input);
  if ('errors' in resolved) throw problems.validation(resolved.errors);
  const now = ctx.clock.now();
  const row: MetricRow = { id: newId(), workspace_id: workspaceId, ...resolved.metric, created_at: now, updated_at: now };
  await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        await insertMetric(trx, row);
        const { unit_dedup_window_ms: _ms, ...described } = resolved.metric;
        await recordAudit(trx, { workspaceId, actorId, action: 'metric.created', targetType: 'metric', targetId: row.id, payload: described, at: now });
      }),
    () => problems.conflict(`a metric with key "${input.key}" already exists in this workspace`),
  );
  return toMetric(row);
}

export async function getMetric(ctx: AppContext, workspaceId: string, id: string) {
  const row = await findMetric(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no metric with id ${id}`);
  return toMetric(row);
}
