import { perUnitKind } from '../metrics/sequence-rules.js';
import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';
import type { Breakdown } from '../analysis/schemas.js';
import { NOTEBOOK_SCRIPT } from './notebook-script.js';

const Z = 1.959964;

interface NotebookVariant {
  variant_key: string;
  is_control: boolean;
  n: number;
  conversions: number;
  /** Normal model: the posterior mean of the per-unit value and the variance of that mean (s² / n). */
  mean: number | null;
  variance_of_mean: number | null;
  /** What the snapshot reports, for the script to compare with. */
  reported: { posterior_mean: number | null; posterior_interval: [number, number] | null; effect: VariantPosterior['effect'] };
}

/**
 * The statistics each variant's posterior is computed from (docs/statistics.md §1): a binary metric's
 * units and conversions (Beta-Binomial); for the others the posterior mean and the variance of the
 * mean, which the 95% interval carries exactly (half-width / 1.959964, squared).
 */
function variantStatistics(model: 'beta' | 'normal', variant: VariantPosterior): NotebookVariant {
  const interval = variant.posterior.credible_interval_95;
  const halfWidth = interval ? (interval[1] - interval[0]) / 2 : null;
  return {
    variant_key: variant.variant_key,
    is_control: variant.is_control,
    n: variant.sample_size,
    conversions: variant.conversions,
    mean: model === 'normal' ? variant.posterior.mean : null,
    variance_of_mean: model === 'normal' && halfWidth !== null ? (halfWidth / Z) ** 2 : null,
    reported: { posterior_mean: variant.posterior.mean, posterior_interval: interval, effect: variant.effect },
  };
}

/** Binary metrics (and funnel and retention metrics, 0/1 per unit) have a Beta posterior whose mean is (1 + conversions) / (2 + n) (docs/statistics.md §1). */
function modelOf(kind: string | null, variants: VariantPosterior[]): 'beta' | 'normal' {
  if (kind !== null) return perUnitKind(kind) === 'binary' ? 'beta' : 'normal';
  const beta = variants.every((v) => v.posterior.mean !== null && Math.abs(v.posterior.mean - (1 + v.conversions) / (2 + v.sample_size)) < 1e-12);
  return beta ? 'beta' : 'normal';
}

/** Each slice of a metric's breakdowns with its variants' statistics, under the metric's model. */
function sliceStatistics(model: 'beta' | 'normal', breakdowns: readonly Breakdown[]) {
  return breakdowns.flatMap((breakdown) =>
    breakdown.values.map((slice) => ({
      dimension: breakdown.dimension,
      value: slice.value,
      label: slice.label,
      variants: slice.per_variant.map((v) => variantStatistics(model, v)),
    })),
  );
}

interface MetricEntry {
  role: string;
  key: string;
  name: string;
  /** The metric's kind when the snapshot names it (guardrails do not: their model is read from the numbers). */
  kind: string | null;
  higher_is_better: boolean;
  variants: VariantPosterior[];
  breakdowns: readonly Breakdown[];
}

/** The snapshot's metrics in the CSV's order: the primary, the secondary metrics, the guardrails, each with its breakdowns. */
function metricEntries(snapshot: AnalysisSnapshot): MetricEntry[] {
  const breakdownsOf = (metricKey: string) => snapshot.metric_breakdowns.find((entry) => entry.metric_key === metricKey)?.breakdowns ?? [];
  const primary = snapshot.primary_metric;
  return [
    ...(primary
      ? [
          {
            role: 'primary',
            key: primary.key,
            name: primary.name,
            kind: primary.kind,
            higher_is_better: primary.higher_is_better,
            variants: snapshot.per_variant,
            breakdowns: snapshot.breakdowns,
          },
        ]
      : []),
    ...snapshot.secondary_metrics.map((metric) => ({
      role: 'secondary',
      key: metric.key,
      name: metric.name,
      kind: metric.kind,
      higher_is_better: metric.higher_is_better,
      variants: metric.per_variant,
      breakdowns: breakdownsOf(metric.key),
    })),
    ...snapshot.guardrails.map((guardrail) => ({
      role: 'guardrail',
      key: guardrail.metric_key,
      name: guardrail.metric_name,
      kind: null,
      higher_is_better: guardrail.higher_is_better,
      variants: guardrail.per_variant,
      breakdowns: breakdownsOf(guardrail.metric_key),
    })),
  ];
}

/** GET /v1/experiments/{id}/results/export?format=notebook: statistics as JSON, and the script that recomputes them. */
export function notebookExport(snapshot: AnalysisSnapshot) {
  const metrics = metricEntries(snapshot).map((entry) => {
    const model = modelOf(entry.kind, entry.variants);
    return {
      role: entry.role,
      key: entry.key,
      name: entry.name,
      model,
      higher_is_better: entry.higher_is_better,
      variants: entry.variants.map((v) => variantStatistics(model, v)),
      slices: sliceStatistics(model, entry.breakdowns),
    };
  });
  return {
    format: 'verdict.notebook.v1',
    experiment_id: snapshot.experiment_id,
    snapshot_id: snapshot.id,
    computed_at: snapshot.computed_at,
    metrics,
    script: NOTEBOOK_SCRIPT,
  };
}
