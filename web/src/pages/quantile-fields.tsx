// Quantile metrics in the admin UI: the percentile as people write it ("p90"), the level, and
// the label a quantile carries on the scorecard.
import { Field, Select } from '../components/ui.js';

export interface QuantileFormFields {
  percentile: string;
  quantile_level: string;
}

const levels = [
  { value: 'event', label: 'Event: over every event’s number (e.g. each page load)' },
  { value: 'unit', label: 'Unit: over one value per unit (its sum or mean)' },
];

/** "p90" for 0.9, "p99.9" for 0.999, "p50" for the median. */
export function percentileLabel(q: number): string {
  return `p${Number((q * 100).toFixed(4))}`;
}

/** The quantile of "p90", "P99.9" or "90" (percent); an unreadable one is said here, not sent. */
export function quantileOf(text: string): number {
  const match = /^\s*[pP]?\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
  const percent = match ? Number(match[1]) : Number.NaN;
  if (!(percent > 0 && percent < 100)) throw new Error('The percentile needs a number strictly between 0 and 100: e.g. p50, p90, p99.');
  return percent / 100;
}

type Bind = (name: keyof QuantileFormFields) => (event: { currentTarget: { value: string } }) => void;

export function QuantileFields({ form, bind }: { form: QuantileFormFields; bind: Bind }) {
  return (
    <div class="row">
      <Field
        label="Percentile"
        required
        value={form.percentile}
        onInput={bind('percentile')}
        hint="Which quantile of the numbers at the property path: e.g. p50 (the median), p90, p99."
      />
      <Select label="Level" value={form.quantile_level} options={levels} onChange={bind('quantile_level')} />
    </div>
  );
}

/** "p90 of events" / "p50 of units": what a quantile metric measures, in a few words. */
export function quantileWords(quantile: { q: number; level: string } | null | undefined): string | null {
  if (!quantile) return null;
  return `${percentileLabel(quantile.q)} of ${quantile.level === 'unit' ? 'units' : 'events'}`;
}
