/**
 * The metric rules the schema cannot express (docs/metrics.md explains each):
 * - the window is a fixed-length ISO 8601 duration from PT1S to P365D;
 * - property_path is the restricted JSON-path subset;
 * - a binary metric only counts (a unit converted or not), so it takes no sum or mean;
 * - sum and mean aggregate a number, so they need property_path; count ignores numbers, so a
 *   property_path there would silently do nothing and is refused;
 * - revenue and duration are amounts: counting their events would report the number of
 *   purchases as revenue, so they need sum or mean;
 * - capping bounds a per-unit number: not for binary metrics (a 0/1 value has nothing to cap) nor
 *   for ratio metrics (cap their numerator and denominator metrics instead); an absolute cap is
 *   positive, a percentile strictly between 0.5 and 1;
 * - a ratio metric names a numerator and a denominator metric and no events of its own.
 */
import type { Executor } from '../../db/database.js';
import type { FieldError } from '../../http/problems.js';
import { DEFAULT_DEDUP_WINDOW, parseDedupWindow } from './dedup-window.js';
import { propertyPathProblem } from './property-path.js';
import { resolveQuantile, type ResolvedQuantile } from './quantile-rules.js';
import type { MetricCapping, MetricInput } from './schemas.js';
import { findMetricsByIds, type MetricRow } from './read.js';

/** A metric input after defaults, with its window already in milliseconds. */
export interface ResolvedMetric extends ResolvedQuantile {
  key: string;
  name: string;
  description: string | null;
  event_key: string;
  kind: MetricRow['kind'];
  aggregation: MetricRow['aggregation'];
  higher_is_better: boolean;
  capping: MetricCapping | null;
  numerator_metric_id: string | null;
  denominator_metric_id: string | null;
  unit_dedup_window: string;
  unit_dedup_window_ms: number;
  property_path: string | null;
  unit: string | null;
}

export function cappingProblem(kind: MetricRow['kind'], capping: MetricCapping | null): string | null {
  if (capping === null) return null;
  if (kind === 'binary') return 'a binary metric’s per-unit value is 0 or 1: there is nothing to cap';
  if (kind === 'ratio') return 'cap the numerator and denominator metrics of a ratio instead';
  if (!Number.isFinite(capping.value)) return 'value must be a finite number';
  if (capping.type === 'absolute' && !(capping.value > 0)) return 'an absolute cap must be greater than 0';
  if (capping.type === 'percentile' && !(capping.value > 0.5 && capping.value < 1)) {
    return 'a percentile cap must lie strictly between 0.5 and 1 (e.g. 0.99 caps at the 99th percentile)';
  }
  return null;
}

function aggregationProblemFor(kind: MetricRow['kind'], aggregation: MetricRow['aggregation']): string | null {
  if (kind === 'binary' && aggregation !== 'count') {
    return `a binary metric counts whether a unit converted; ${aggregation} needs a count, revenue or duration metric`;
  }
  if ((kind === 'revenue' || kind === 'duration') && aggregation === 'count') {
    return `a ${kind} metric measures an amount: use sum or mean with a property_path (aggregation defaults to count)`;
  }
  if (kind === 'quantile' && aggregation === 'count') {
    return 'a quantile metric is taken over numbers: use sum or mean (how a unit’s numbers become its value at the unit level) with a property_path';
  }
  if (kind === 'ratio' && aggregation !== 'sum') return 'a ratio metric divides the sum of its numerator by the sum of its denominator: aggregation is sum';
  return null;
}

function propertyPathProblemFor(kind: MetricRow['kind'], aggregation: MetricRow['aggregation'], propertyPath: string | null): string | null {
  if (kind === 'ratio') return propertyPath === null ? null : 'a ratio metric reads no events; set property_path on its numerator or denominator metric';
  if (aggregation === 'count') {
    return propertyPath === null ? null : 'count does not read event properties; remove property_path or aggregate with sum or mean';
  }
  if (propertyPath === null) return `${aggregation} aggregates a number from each event; name the property holding it`;
  return propertyPathProblem(propertyPath);
}

/** The fields that name what the metric reads: events for most kinds, two metrics for a ratio. */
function sourceErrors(input: MetricInput): FieldError[] {
  const errors: FieldError[] = [];
  if (input.kind === 'ratio') {
    if (input.event_key !== undefined)
      errors.push({ pointer: '/event_key', message: 'a ratio metric reads the events of its numerator and denominator metrics; remove event_key' });
    if (input.numerator_metric_id === undefined) errors.push({ pointer: '/numerator_metric_id', message: 'a ratio metric needs a numerator metric' });
    if (input.denominator_metric_id === undefined) errors.push({ pointer: '/denominator_metric_id', message: 'a ratio metric needs a denominator metric' });
    return errors;
  }
  if (input.event_key === undefined) errors.push({ pointer: '/event_key', message: 'is required' });
  for (const field of ['numerator_metric_id', 'denominator_metric_id'] as const) {
    if (input[field] !== undefined) errors.push({ pointer: `/${field}`, message: 'only a ratio metric has a numerator and a denominator' });
  }
  return errors;
}

export function resolveMetricInput(input: MetricInput): { metric: ResolvedMetric } | { errors: FieldError[] } {
  const aggregation = input.aggregation ?? (input.kind === 'ratio' || input.kind === 'quantile' ? 'sum' : 'count');
  const window = input.unit_dedup_window ?? DEFAULT_DEDUP_WINDOW;
  const propertyPath = input.property_path ?? null;
  const capping = input.capping ?? null;
  const parsedWindow = parseDedupWindow(window);
  const errors = sourceErrors(input);
  if (!parsedWindow.ok) errors.push({ pointer: '/unit_dedup_window', message: parsedWindow.message });
  const aggregationProblem = aggregationProblemFor(input.kind, aggregation);
  if (aggregationProblem) {
    // The property_path rules depend on the aggregation; judging them against a refused one misleads.
    errors.push({ pointer: '/aggregation', message: aggregationProblem });
  } else {
    const pathProblem = propertyPathProblemFor(input.kind, aggregation, propertyPath);
    if (pathProblem) errors.push({ pointer: '/property_path', message: pathProblem });
  }
  const unit = input.unit ?? null;
  if (unit !== null && input.kind === 'binary') {
    errors.push({ pointer: '/unit', message: 'a binary metric is a rate, shown in %: a unit is for counts, amounts, durations and ratios' });
  }
  const capProblem = cappingProblem(input.kind, capping);
  if (capProblem) errors.push({ pointer: '/capping', message: capProblem });
  const quantile = resolveQuantile(input);
  errors.push(...quantile.errors);
  if (errors.length > 0 || !parsedWindow.ok) return { errors };
  return {
    metric: {
      key: input.key,
      name: input.name,
      description: input.description ?? null,
      event_key: input.event_key ?? '',
      kind: input.kind,
      aggregation,
      higher_is_better: input.higher_is_better ?? true,
      capping,
      numerator_metric_id: input.numerator_metric_id ?? null,
      denominator_metric_id: input.denominator_metric_id ?? null,
      unit_dedup_window: window,
      unit_dedup_window_ms: parsedWindow.ms,
      property_path: propertyPath,
      unit,
      ...quantile.resolved,
    },
  };
}

/** Both components of a ratio must be metrics of the workspace, and not ratios themselves. */
export async function ratioComponentErrors(executor: Executor, workspaceId: string, metric: ResolvedMetric): Promise<FieldError[]> {
  if (metric.kind !== 'ratio') return [];
  const ids = [metric.numerator_metric_id, metric.denominator_metric_id].filter((id): id is string => id !== null);
  const found = new Map((await findMetricsByIds(executor, workspaceId, ids)).map((row) => [row.id, row]));
  const errors: FieldError[] = [];
  for (const field of ['numerator_metric_id', 'denominator_metric_id'] as const) {
    const row = found.get(metric[field] ?? '');
    if (!row) errors.push({ pointer: `/${field}`, message: 'no metric with this id exists in the workspace' });
    else if (row.kind === 'ratio') errors.push({ pointer: `/${field}`, message: `"${row.key}" is a ratio metric; a ratio of ratios is not supported` });
  }
  return errors;
}
