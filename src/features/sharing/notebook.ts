import { perUnitKind } from '../metrics/sequence-rules.js';
import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';
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

/** GET /v1/experiments/{id}/results/export?format=notebook: statistics as JSON, and the script that recomputes them. */
export function notebookExport(snapshot: AnalysisSnapshot) {
  const metrics = [];
  const primary = snapshot.primary_metric;
  if (primary) {
    const model = modelOf(primary.kind, snapshot.per_variant);
    metrics.push({
      role: 'primary',
      key: primary.key,
      name: primary.name,
      model,
      higher_is_better: primary.higher_is_better,
      variants: snapshot.per_variant.map((v) => variantStatistics(model, v)),
    });
  }
  for (const guardrail of snapshot.guardrails) {
    const model = modelOf(null, guardrail.per_variant);
    metrics.push({
      role: 'guardrail',
      key: guardrail.metric_key,
      name: guardrail.metric_name,
      model,
      higher_is_better: guardrail.higher_is_better,
      variants: guardrail.per_variant.map((v) => variantStatistics(model, v)),
    });
  }
  return {
    format: 'verdict.notebook.v1',
    experiment_id: snapshot.experiment_id,
    snapshot_id: snapshot.id,
    computed_at: snapshot.computed_at,
    metrics,
    script: NOTEBOOK_SCRIPT,
  };
}
