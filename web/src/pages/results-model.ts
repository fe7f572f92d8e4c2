// What the results page reads from a snapshot, under the names a person knows: each metric with
// its name, kind, unit and direction, and the recommendation the header leads with.
import { metricFormat, type MetricFormat, type MetricKind } from '../format.js';
import type { Metric, Snapshot, VariantPosterior } from '../types.js';

/** What to do (decisions §15): computed by the server on every snapshot, health before effect. */
export type Recommendation = Snapshot['decision']['recommendation'];
export type RecommendationCode = Recommendation['action'];

export interface MetricView {
  id: string;
  key: string;
  name: string;
  role: 'primary' | 'secondary' | 'guardrail';
  kind: MetricKind;
  unit: string | null;
  higherIsBetter: boolean;
  capApplied: number | null;
  cuped: Snapshot['guardrails'][number]['cuped'];
  perVariant: VariantPosterior[];
  format: MetricFormat;
}

function controlMean(perVariant: VariantPosterior[]): number | null {
  const control = perVariant.find((v) => v.is_control) ?? perVariant[0];
  return control?.posterior.mean ?? control?.observed_rate ?? null;
}

/** The primary metric, then the secondary metrics, then the guardrails, each under its name (the key only when the metric is gone). */
export function metricViews(snapshot: Snapshot, catalogue: Metric[]): MetricView[] {
  const byId = new Map(catalogue.map((metric) => [metric.id, metric]));
  const views: MetricView[] = [];
  const primary = snapshot.primary_metric;
  if (primary) {
    const known = byId.get(primary.id);
    const unit = primary.unit ?? known?.unit ?? null;
    views.push({
      id: primary.id,
      key: primary.key,
      name: primary.name || known?.name || primary.key,
      role: 'primary',
      kind: primary.kind,
      unit,
      higherIsBetter: primary.higher_is_better !== false,
      capApplied: primary.cap_applied,
      cuped: primary.cuped,
      perVariant: snapshot.per_variant,
      format: metricFormat({ kind: primary.kind, unit, reference: controlMean(snapshot.per_variant) }),
    });
  }
  for (const secondary of snapshot.secondary_metrics ?? []) {
    const unit = secondary.unit ?? byId.get(secondary.id)?.unit ?? null;
    views.push({
      id: secondary.id,
      key: secondary.key,
      name: secondary.name || byId.get(secondary.id)?.name || secondary.key,
      role: 'secondary',
      kind: secondary.kind,
      unit,
      higherIsBetter: secondary.higher_is_better !== false,
      capApplied: secondary.cap_applied,
      cuped: secondary.cuped,
      perVariant: secondary.per_variant,
      format: metricFormat({ kind: secondary.kind, unit, reference: controlMean(secondary.per_variant) }),
    });
  }
  for (const guardrail of snapshot.guardrails ?? []) {
    // The snapshot does not carry a guardrail's kind: the catalogue does (a deleted metric reads as a number).
    const known = byId.get(guardrail.metric_id);
    const kind: MetricKind = known?.kind ?? 'count';
    const unit = guardrail.unit ?? known?.unit ?? null;
    views.push({
      id: guardrail.metric_id,
      key: guardrail.metric_key,
      name: guardrail.metric_name || known?.name || guardrail.metric_key,
      role: 'guardrail',
      kind,
      unit,
      higherIsBetter: guardrail.higher_is_better !== false,
      capApplied: guardrail.cap_applied,
      cuped: guardrail.cuped,
      perVariant: guardrail.per_variant,
      format: metricFormat({ kind, unit, reference: controlMean(guardrail.per_variant) }),
    });
  }
  return views;
}

/** The variant the header talks about: the recommended one, else the best-looking treatment. */
export function focusVariant(snapshot: Snapshot, recommendation: Recommendation): VariantPosterior | undefined {
  const treatments = snapshot.per_variant.filter((v) => !v.is_control);
  const named = treatments.find((v) => v.variant_key === recommendation.variant_key);
  if (named) return named;
  return [...treatments].sort((a, b) => (b.effect?.chance_to_beat_control ?? 0) - (a.effect?.chance_to_beat_control ?? 0))[0];
}
