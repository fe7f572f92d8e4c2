import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';

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
] as const;

function variantCells(snapshot: AnalysisSnapshot, role: string, metricKey: string | null, metricName: string | null, variant: VariantPosterior) {
  const effect = variant.effect;
  return [
    snapshot.id,
    snapshot.computed_at,
    role,
    metricKey,
    metricName,
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
    snapshot.srm_chi_squared_p,
  ];
}

/** One row per metric (the primary, then each guardrail) and variant of one snapshot. */
export function snapshotRows(snapshot: AnalysisSnapshot): string {
  const primary = snapshot.primary_metric;
  let out = '';
  for (const variant of snapshot.per_variant)
    out += line(variantCells(snapshot, primary ? 'primary' : 'none', primary?.key ?? null, primary?.name ?? null, variant));
  for (const guardrail of snapshot.guardrails) {
    for (const variant of guardrail.per_variant) out += line(variantCells(snapshot, 'guardrail', guardrail.metric_key, guardrail.metric_name, variant));
  }
  return out;
}

export function csvHeader(): string {
  return line([...RESULT_COLUMNS]);
}
