import { EffectChart, effectRows, readingOf } from '../charts/effect-chart.js';
import { Table } from '../components/ui.js';
import { percent } from '../format.js';
import type { GuardrailRegression, VariantPosterior } from '../types.js';
import type { Formatter } from './results-parts.js';

/**
 * What a person reads first: how much better or worse each variant is than the control, in the
 * metric's direction, with its interval and the chance that it beats the control.
 */
export function EffectSummary({
  title,
  perVariant,
  higherIsBetter,
  format,
}: {
  title: string;
  perVariant: VariantPosterior[];
  higherIsBetter: boolean;
  format: Formatter;
}) {
  const rows = effectRows(perVariant);
  const interval = (pair: [number, number] | null, show: (value: number) => string) => (pair ? `${show(pair[0])} to ${show(pair[1])}` : '—');
  return (
    <>
      <EffectChart title={title} rows={rows} higherIsBetter={higherIsBetter} format={format} />
      {rows.length > 0 ? (
        <Table
          caption={`${title}: effect against the control`}
          columns={['Variant', 'Lift', '95% interval of the lift', 'Difference', '95% interval of the difference', 'Chance to beat control', 'Reading']}
        >
          {perVariant.flatMap((variant) => {
            const effect = variant.effect;
            if (!effect) return [];
            return [
              <tr key={variant.variant_key}>
                <th scope="row">
                  <code>{variant.variant_key}</code>
                </th>
                <td>{percent(effect.relative.mean, 2)}</td>
                <td>{interval(effect.relative.credible_interval_95, (value) => percent(value, 2))}</td>
                <td>{format(effect.absolute.mean)}</td>
                <td>{interval(effect.absolute.credible_interval_95, format)}</td>
                <td>{percent(effect.chance_to_beat_control, 2)}</td>
                <td>{readingOf({ low: effect.absolute.credible_interval_95[0], high: effect.absolute.credible_interval_95[1] }, higherIsBetter)}</td>
              </tr>,
            ];
          })}
        </Table>
      ) : null}
    </>
  );
}

/** The guardrails the variant the decision points at makes worse: shipping it would cost them. */
export function GuardrailWarning({ regressions }: { regressions: GuardrailRegression[] }) {
  if (regressions.length === 0) return null;
  return (
    <div class="warning" role="alert" data-testid="guardrail-warning">
      <strong>Guardrail regression.</strong>{' '}
      {regressions.map((regression, index) => (
        <span key={regression.metric_id}>
          {index > 0 ? '; ' : ''}
          <code>{regression.variant_key}</code> is very likely worse than the control on <code>{regression.metric_key}</code> (chance to beat control{' '}
          {percent(regression.chance_to_beat_control, 2)})
        </span>
      ))}
      . Weigh that harm before you ship it.
    </div>
  );
}
