import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';
import type { Breakdown, BreakdownValue } from '../analysis/schemas.js';

// RFC 4180 CSV. Text cells that a spreadsheet would run as a formula (=, +, -, @, tab, CR) are
// prefixed with an apostrophe, as OWASP's "CSV Injection" advises: metric and variant names are
// typed by people, and an export is opened by others.
const FORMULA_START = /^[=+\-@\t\r]/;

function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function line(cells: Array<string | number | boolean | null | undefined>): string {
  return cells.map(cell).join(',') + '\r\n';
}

export const RESULT_COLUMNS = [
  'snapshot_id',
  'computed_at',
  'metric_role',
  'metric_key',
  'metric_name',
  'variant_key',
  'is_control',
  'sample_size',
  'conversions',
  'observed_rate',
  'posterior_mean',
  'posterior_ci_low',
  'posterior_ci_high',
  'prob_best',
  'expected_loss',
  'effect_absolute',
  'effect_absolute_ci_low',
  'effect_absolute_ci_high',
  'effect_relative',
  'effect_relative_ci_low',
  'effect_relative_ci_high',
  'chance_to_beat_control',
  'srm_p_value',
  'dimension',
  'dimension_value',
  'dimension_label',
  'slice_units',
  'significant_after_correction',
] as const;

/** The metric a row is about: its role in the experiment, key and name. */
interface RowMetric {
  role: string;
  key: string | null;
  name: string | null;
}

/** The slice a breakdown row is about; the whole experiment's rows have none. */
interface RowSlice {
  dimension: string;
  value: BreakdownValue;
}

/** One variant's numbers; a slice's row carries the slice's own SRM p-value and what identifies it. */
function variantCells(snapshot: AnalysisSnapshot, metric: RowMetric, variant: VariantPosterior, slice: RowSlice | null) {
  const effect = variant.effect;
  return [
    snapshot.id,
    snapshot.computed_at,
    metric.role,
    metric.key,
    metric.name,
    variant.variant_key,
    variant.is_control,
    variant.sample_size,
    variant.conversions,
    variant.observed_rate,
    variant.posterior.mean,
    variant.posterior.credible_interval_95?.[0],
    variant.posterior.credible_interval_95?.[1],
    variant.prob_best,
    variant.expected_loss_if_stop_now,
    effect?.absolute.mean,
    effect?.absolute.credible_interval_95[0],
    effect?.absolute.credible_interval_95[1],
    effect?.relative.mean,
    effect?.relative.credible_interval_95?.[0],
    effect?.relative.credible_interval_95?.[1],
    effect?.chance_to_beat_control,
    slice ? slice.value.srm_chi_squared_p : snapshot.srm_chi_squared_p,
    slice?.dimension,
    slice?.value.value,
    slice?.value.label,
    slice?.value.units,
    slice?.value.significant_after_correction,
  ];
}

function breakdownRows(snapshot: AnalysisSnapshot, metric: RowMetric, breakdowns: readonly Breakdown[]): string {
  let out = '';
  for (const breakdown of breakdowns) {
    for (const value of breakdown.values) {
      for (const variant of value.per_variant) out += line(variantCells(snapshot, metric, variant, { dimension: breakdown.dimension, value }));
    }
  }
  return out;
}

/**
 * One row per metric and variant of one snapshot (the primary, each secondary metric, each
 * guardrail), then one per metric, slice and variant of the breakdowns (the primary's, then each
 * guardrail's and secondary metric's, as the snapshot lists them).
 */
export function snapshotRows(snapshot: AnalysisSnapshot): string {
  const primary = snapshot.primary_metric;
  const primaryMetric = { role: primary ? 'primary' : 'none', key: primary?.key ?? null, name: primary?.name ?? null };
  let out = '';
  for (const variant of snapshot.per_variant) out += line(variantCells(snapshot, primaryMetric, variant, null));
  for (const secondary of snapshot.secondary_metrics) {
    const metric = { role: 'secondary', key: secondary.key, name: secondary.name };
    for (const variant of secondary.per_variant) out += line(variantCells(snapshot, metric, variant, null));
  }
  for (const guardrail of snapshot.guardrails) {
    const metric = { role: 'guardrail', key: guardrail.metric_key, name: guardrail.metric_name };
    for (const variant of guardrail.per_variant) out += line(variantCells(snapshot, metric, variant, null));
  }
  out += breakdownRows(snapshot, primaryMetric, snapshot.breakdowns);
  for (const entry of snapshot.metric_breakdowns) {
    out += breakdownRows(snapshot, { role: entry.role, key: entry.metric_key, name: entry.metric_name }, entry.breakdowns);
  }
  return out;
}

export function csvHeader(): string {
  return line([...RESULT_COLUMNS]);
}
