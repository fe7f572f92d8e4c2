import { EffectChart, effectRows } from '../charts/effect-chart.js';
import { IntervalChart, type IntervalRow } from '../charts/interval-chart.js';
import { Table } from '../components/ui.js';
import { chance, integer, isRate } from '../format.js';
import type { VariantPosterior } from '../types.js';
import type { MetricView } from './results-model.js';
import { liftOf, liftText } from './results-scorecard.js';
import { CupedNote } from './variance-reduction.js';

const ROLE_WORDS = { primary: 'primary metric', secondary: 'secondary metric', guardrail: 'guardrail' } as const;

export function intervalRows(perVariant: VariantPosterior[]): IntervalRow[] {
  return perVariant.flatMap((v) => {
    const interval = v.posterior.credible_interval_95;
    if (!interval || v.posterior.mean === null) return [];
    return [{ label: v.variant_key, mean: v.posterior.mean, low: interval[0], high: interval[1], isControl: Boolean(v.is_control) }];
  });
}

/** Per variant: the numbers behind the charts, in the metric's units. */
function PosteriorTable({ metric }: { metric: MetricView }) {
  const { format } = metric;
  const columns = ['Variant', 'Units', ...(isRate(metric.kind) ? [format.countLabel] : []), 'Observed mean', 'Posterior mean', '95% credible interval'];
  return (
    <Table caption={`${metric.name}: posterior per variant`} columns={[...columns, 'Probability best', 'Expected loss']}>
      {metric.perVariant.map((v) => (
        <tr key={v.variant_key}>
          <th scope="row">
            {v.variant_key}
            {v.is_control ? <span class="muted"> (control)</span> : null}
          </th>
          <td>{integer(v.sample_size)}</td>
          {isRate(metric.kind) ? <td>{integer(v.conversions)}</td> : null}
          <td>{format.value(v.observed_rate)}</td>
          <td>{format.value(v.posterior.mean)}</td>
          <td>
            {v.posterior.credible_interval_95
              ? `${format.value(v.posterior.credible_interval_95[0])} to ${format.value(v.posterior.credible_interval_95[1])}`
              : '—'}
          </td>
          <td>{chance(v.prob_best)}</td>
          <td>{format.value(v.expected_loss_if_stop_now)}</td>
        </tr>
      ))}
    </Table>
  );
}

/** Lift and difference against the control per treatment, in words and numbers. */
function EffectTable({ metric }: { metric: MetricView }) {
  const rows = metric.perVariant.flatMap((variant) => {
    const cell = liftOf(variant.effect);
    return cell && variant.effect ? [{ variant, cell, effect: variant.effect }] : [];
  });
  if (rows.length === 0) return null;
  return (
    <Table
      caption={`${metric.name}: effect against the control`}
      columns={['Variant', 'Lift (95% interval)', 'Difference (95% interval)', 'Chance to beat control']}
    >
      {rows.map(({ variant, cell, effect }) => {
        const text = liftText(cell, metric);
        const [low, high] = effect.absolute.credible_interval_95;
        return (
          <tr key={variant.variant_key}>
            <th scope="row">{variant.variant_key}</th>
            <td>{cell.relative ? `${text.mean} (${text.interval})` : '— (the control’s mean is 0)'}</td>
            <td>
              {metric.format.difference(effect.absolute.mean)} ({metric.format.difference(low)} to {metric.format.difference(high)})
            </td>
            <td>{chance(cell.chance)}</td>
          </tr>
        );
      })}
    </Table>
  );
}

/** What capping did to this metric: ratios and rates are never capped, so they say nothing. */
function CapNote({ metric }: { metric: MetricView }) {
  if (metric.capApplied === null || metric.kind === 'ratio' || isRate(metric.kind)) return null;
  return <p class="muted">Each unit’s value is capped at {metric.format.value(metric.capApplied)} before the means are taken.</p>;
}

/** One metric's details, collapsed under the scorecard: the forest plot, the posteriors and their numbers. */
export function MetricDetails({ metric }: { metric: MetricView }) {
  return (
    <details class="metric-details" id={`metric-${metric.id}`} data-testid={`details-${metric.key}`}>
      <summary>
        <strong>{metric.name}</strong> <span class="muted">({ROLE_WORDS[metric.role]}): details</span>
      </summary>
      <CapNote metric={metric} />
      <CupedNote cuped={metric.cuped} />
      <EffectChart
        title={`Effect on ${metric.name}`}
        rows={effectRows(metric.perVariant)}
        higherIsBetter={metric.higherIsBetter}
        format={metric.format.difference}
      />
      <EffectTable metric={metric} />
      <IntervalChart
        title={`${metric.name}: posterior mean and 95% credible interval per variant`}
        rows={intervalRows(metric.perVariant)}
        format={metric.format.value}
      />
      <PosteriorTable metric={metric} />
    </details>
  );
}
