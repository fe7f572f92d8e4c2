import { readingOf } from '../charts/effect-chart.js';
import { LiftBar } from '../charts/lift-bar.js';
import { padded } from '../charts/scale.js';
import { chance, lift } from '../format.js';
import type { Effect, Snapshot, VariantPosterior } from '../types.js';
import { AdjustedLine, CorrectionNote } from './results-correction.js';
import type { MetricView } from './results-model.js';
import { percentileLabel, quantileWords } from './quantile-fields.js';

/** A variant's effect as the scorecard shows it: relative lift when the control's mean allows one. */
export interface LiftCell {
  relative: boolean;
  mean: number;
  low: number;
  high: number;
  chance: number;
}

export function liftOf(effect: Effect | null | undefined): LiftCell | null {
  if (!effect) return null;
  const interval = effect.relative.credible_interval_95;
  if (interval && effect.relative.mean !== null) {
    return { relative: true, mean: effect.relative.mean, low: interval[0], high: interval[1], chance: effect.chance_to_beat_control };
  }
  const [low, high] = effect.absolute.credible_interval_95;
  return { relative: false, mean: effect.absolute.mean, low, high, chance: effect.chance_to_beat_control };
}

/** "+17.4% (+8.1% to +27.0%)", or the difference in the metric's own terms when no lift is defined. */
export function liftText(cell: LiftCell, metric: Pick<MetricView, 'format'>): { mean: string; interval: string } {
  const show = cell.relative ? (v: number) => lift(v) : (v: number) => metric.format.difference(v);
  return { mean: show(cell.mean), interval: `${show(cell.low)} to ${show(cell.high)}` };
}

const readingWords = { better: 'better', worse: 'worse', unclear: 'not yet clear' } as const;

function ScoreCell({ metric, variant, domain }: { metric: MetricView; variant: VariantPosterior; domain: [number, number] }) {
  const cell = liftOf(variant.effect);
  if (!cell)
    return (
      <td class="muted">
        not enough units yet
        <QuantileLine metric={metric} variant={variant} />
      </td>
    );
  const text = liftText(cell, metric);
  const reading = readingOf(cell, metric.higherIsBetter);
  return (
    <td class={`score score-${reading}`} data-testid={`score-${metric.key}-${variant.variant_key}`} data-reading={reading}>
      <div class="score-line">
        <strong>{text.mean}</strong> <span class="muted">({text.interval})</span>
      </div>
      <LiftBar
        mean={cell.mean}
        low={cell.low}
        high={cell.high}
        domain={domain}
        higherIsBetter={metric.higherIsBetter}
        label={`${variant.variant_key} on ${metric.name}: ${text.mean}, 95% interval ${text.interval}, ${readingWords[reading]}`}
      />
      <div class="hint">
        {readingWords[reading]} · chance to beat control {chance(cell.chance)}
      </div>
      <QuantileLine metric={metric} variant={variant} />
      <AdjustedLine effect={variant.effect} testId={`adjusted-${metric.key}-${variant.variant_key}`} />
    </td>
  );
}

/** A quantile metric's value in the variant: "p90 245 ms (231 ms to 262 ms)". */
function QuantileLine({ metric, variant }: { metric: MetricView; variant: VariantPosterior | undefined }) {
  const quantile = variant?.quantile;
  if (!quantile || !variant) return null;
  const interval = quantile.interval_95 ? ` (${metric.format.value(quantile.interval_95[0])} to ${metric.format.value(quantile.interval_95[1])})` : '';
  return (
    <div class="hint" data-testid={`quantile-${metric.key}-${variant.variant_key}`}>
      {percentileLabel(quantile.q)} {metric.format.value(quantile.value)}
      {interval}
    </div>
  );
}

const ROLE_LABELS = { primary: 'Primary', secondary: 'Secondary', guardrail: 'Guardrail' } as const;

/**
 * One row per metric (the primary first, then the secondary metrics, then the guardrails), one
 * column per treatment: its lift against the control with the 95% interval, coloured by the
 * metric's direction, and its adjusted p-value when the snapshot corrected for multiple testing.
 */
export function Scorecard({ metrics, treatments, correction }: { metrics: MetricView[]; treatments: string[]; correction?: Snapshot['multiple_testing'] }) {
  if (metrics.length === 0) return <p class="muted">This experiment has no metrics: only sample sizes and the SRM check are reported.</p>;
  return (
    <div class="table-wrap" role="region" aria-label="Scorecard" tabIndex={0}>
      <CorrectionNote correction={correction ?? null} />
      <table class="scorecard" data-testid="scorecard">
        <caption class="visually-hidden">Scorecard: each metric’s lift against the control per variant</caption>
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col">Control</th>
            {treatments.map((key) => (
              <th scope="col" key={key}>
                {key} vs control
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {metrics.map((metric) => {
            const cells = metric.perVariant.flatMap((v) => {
              const cell = liftOf(v.effect);
              return cell ? [cell.low, cell.high] : [];
            });
            const domain = padded([0, ...cells]);
            const control = metric.perVariant.find((v) => v.is_control);
            return (
              <tr key={metric.id} data-testid={`scorecard-row-${metric.key}`}>
                <th scope="row">
                  <a href={`#metric-${metric.id}`}>{metric.name}</a>
                  <div class="hint">
                    {ROLE_LABELS[metric.role]} · {metric.higherIsBetter ? '↑ higher is better' : '↓ lower is better'}
                    {control?.quantile ? ` · ${quantileWords(control.quantile)}` : ''}
                  </div>
                </th>
                <td>
                  {metric.format.value(control?.posterior.mean ?? control?.observed_rate)}
                  <QuantileLine metric={metric} variant={control} />
                </td>
                {treatments.map((key) => {
                  const variant = metric.perVariant.find((v) => v.variant_key === key);
                  return variant ? <ScoreCell key={key} metric={metric} variant={variant} domain={domain} /> : <td key={key}>—</td>;
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
