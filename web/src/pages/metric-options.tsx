import { Field, Select } from '../components/ui.js';
import type { Metric, MetricCapping } from '../types.js';

/** The form fields for direction and capping, shared by the create and edit forms (all strings). */
export interface EffectFields {
  higher_is_better: string;
  capping_type: string;
  capping_value: string;
}

export const directions = [
  { value: 'true', label: 'Higher is better (conversion, revenue)' },
  { value: 'false', label: 'Lower is better (errors, load time, churn)' },
];

const cappingTypes = [
  { value: '', label: 'No capping' },
  { value: 'absolute', label: 'Absolute: cap each unit’s value at a number' },
  { value: 'percentile', label: 'Percentile: cap at a quantile of the units’ values' },
];

/** The capping the fields describe; a value that is not a number is said here, not sent. */
export function cappingOf(fields: EffectFields): MetricCapping | null {
  if (fields.capping_type === '') return null;
  const value = Number(fields.capping_value);
  if (fields.capping_value.trim() === '' || !Number.isFinite(value))
    throw new Error('The cap needs a number: e.g. 1000 for an absolute cap, 0.99 for a percentile.');
  return { type: fields.capping_type as MetricCapping['type'], value };
}

export function effectFieldsOf(metric: Pick<Metric, 'higher_is_better' | 'capping'>): EffectFields {
  return {
    higher_is_better: String(metric.higher_is_better),
    capping_type: metric.capping?.type ?? '',
    capping_value: metric.capping ? String(metric.capping.value) : '',
  };
}

type Bind = (name: keyof EffectFields) => (event: { currentTarget: { value: string } }) => void;

/** Direction, and capping for the kinds that have a number to cap. */
export function DirectionAndCapping({ form, bind, kind }: { form: EffectFields; bind: Bind; kind: string }) {
  const cappable = kind !== 'binary' && kind !== 'ratio' && kind !== 'funnel' && kind !== 'retention';
  return (
    <div class="row">
      <Select
        label="Direction"
        value={form.higher_is_better}
        options={directions}
        onChange={bind('higher_is_better')}
        hint="Which way is good: the effect’s colours, the chance of being best and the verdict follow it."
      />
      {cappable ? (
        <>
          <Select
            label="Capping"
            value={form.capping_type}
            options={cappingTypes}
            onChange={bind('capping_type')}
            hint="Winsorizes each unit’s value so a few outliers do not swamp the result."
          />
          {form.capping_type ? (
            <Field
              label={form.capping_type === 'percentile' ? 'Cap percentile' : 'Cap value'}
              required
              inputMode="decimal"
              value={form.capping_value}
              onInput={bind('capping_value')}
              hint={form.capping_type === 'percentile' ? 'Strictly between 0.5 and 1, e.g. 0.99.' : 'Greater than 0.'}
            />
          ) : null}
        </>
      ) : null}
    </div>
  );
}
