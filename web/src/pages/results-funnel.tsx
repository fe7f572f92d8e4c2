import { FunnelChart } from '../charts/funnel-chart.js';
import { integer } from '../format.js';
import type { MetricView } from './results-model.js';

/** A funnel metric's chart per variant: the units at each step and the drop-off from the one before. */
export function FunnelCharts({ metric }: { metric: MetricView }) {
  if (metric.kind !== 'funnel' || !metric.perVariant.some((variant) => variant.steps)) return null;
  let treatments = 0;
  return (
    <section class="funnel" aria-labelledby={`funnel-${metric.id}`} data-testid={`funnel-${metric.key}`}>
      <h3 id={`funnel-${metric.id}`}>Funnel: {metric.name}</h3>
      {metric.perVariant.map((variant) => (
        <FunnelChart
          key={variant.variant_key}
          variant={variant.variant_key}
          isControl={variant.is_control}
          index={variant.is_control ? 0 : treatments++}
          steps={(variant.steps ?? []).map((step) => ({
            label: step.event_key,
            rate: step.rate,
            interval: step.rate_interval_95,
            stepRate: step.step_rate,
            conversions: step.conversions,
          }))}
        />
      ))}
    </section>
  );
}

/** A retention metric's units still inside their window, left out of its sample. */
export function RetentionNote({ metric }: { metric: MetricView }) {
  if (metric.kind !== 'retention') return null;
  const pending = metric.perVariant.reduce((sum, variant) => sum + (variant.pending_units ?? 0), 0);
  if (pending === 0) return null;
  return (
    <p class="muted" data-testid={`retention-pending-${metric.key}`}>
      {metric.name}: {integer(pending)} units whose retention window has not ended yet are left out.
    </p>
  );
}
