import { KEY_PATTERN } from '../patterns.js';
import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Metric } from '../types.js';
import { durationWords, fromDaysText } from '../units.js';
import { cappingOf, DirectionAndCapping } from './metric-options.js';
import { percentileLabel, QuantileFields, quantileOf } from './quantile-fields.js';

const kinds = [
  { value: 'binary', label: 'binary — did the unit convert' },
  { value: 'count', label: 'count — events per unit' },
  { value: 'revenue', label: 'revenue — a number per unit' },
  { value: 'duration', label: 'duration — a number per unit' },
  { value: 'ratio', label: 'ratio — one metric’s sum over another’s' },
  { value: 'quantile', label: 'quantile — a percentile of a number (p50, p90, p99)' },
];
const aggregations = ['count', 'sum', 'mean'].map((value) => ({ value, label: value }));
const blank = {
  key: '',
  name: '',
  description: '',
  event_key: '',
  kind: 'binary',
  aggregation: 'count',
  unit_dedup_window: '7',
  property_path: '',
  unit: '',
  higher_is_better: 'true',
  capping_type: '',
  capping_value: '',
  numerator_metric_id: '',
  denominator_metric_id: '',
  percentile: 'p90',
  quantile_level: 'event',
};
type MetricFormFields = typeof blank;

/** The request body: a ratio names its two metrics, the other kinds their events. */
function bodyOf(form: MetricFormFields): Record<string, unknown> {
  const common = {
    key: form.key,
    name: form.name,
    kind: form.kind,
    higher_is_better: form.higher_is_better === 'true',
    ...(form.description ? { description: form.description } : {}),
    ...(form.unit && form.kind !== 'binary' ? { unit: form.unit } : {}),
  };
  if (form.kind === 'ratio') return { ...common, numerator_metric_id: form.numerator_metric_id, denominator_metric_id: form.denominator_metric_id };
  return {
    ...common,
    event_key: form.event_key,
    aggregation: form.aggregation,
    unit_dedup_window: fromDaysText(form.unit_dedup_window),
    property_path: form.property_path || null,
    capping: cappingOf(form),
    ...(form.kind === 'quantile' ? { quantile: quantileOf(form.percentile), quantile_level: form.quantile_level } : {}),
  };
}

function RatioFields({
  form,
  bind,
  metrics,
}: {
  form: MetricFormFields;
  bind: (name: keyof MetricFormFields) => (event: { currentTarget: { value: string } }) => void;
  metrics: Metric[];
}) {
  const options = [
    { value: '', label: 'Choose a metric' },
    ...metrics.filter((m) => m.kind !== 'ratio').map((m) => ({ value: m.id, label: `${m.name} (${m.kind})` })),
  ];
  return (
    <div class="row">
      <Select
        label="Numerator metric"
        required
        value={form.numerator_metric_id}
        options={options}
        onChange={bind('numerator_metric_id')}
        hint="Summed over the units, e.g. revenue."
      />
      <Select
        label="Denominator metric"
        required
        value={form.denominator_metric_id}
        options={options}
        onChange={bind('denominator_metric_id')}
        hint="Summed over the units, e.g. orders."
      />
    </div>
  );
}

function MetricForm({ onCreated, metrics }: { onCreated: () => void; metrics: Metric[] }) {
  const { form, setForm, bind: set } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/metrics', bodyOf(form));
    setForm(blank);
    onCreated();
  };
  const ratio = form.kind === 'ratio';
  return (
    <FormCard id="new-metric" title="New metric" submitLabel="Create metric" onSubmit={create}>
      <div class="row">
        <Field label="Key" required pattern={KEY_PATTERN} value={form.key} onInput={set('key')} />
        <Field label="Name" required value={form.name} onInput={set('name')} />
        <Select label="Kind" value={form.kind} options={kinds} onChange={set('kind')} />
        {ratio ? null : (
          <Field
            label="Event key"
            required
            pattern={KEY_PATTERN}
            value={form.event_key}
            onInput={set('event_key')}
            hint="The event_key of the events it counts."
          />
        )}
      </div>
      {ratio ? (
        <RatioFields form={form} bind={set} metrics={metrics} />
      ) : (
        <div class="row">
          <Select label="Aggregation" value={form.aggregation} options={aggregations} onChange={set('aggregation')} />
          <Field
            label="Per-unit window (days)"
            type="number"
            min={0}
            step="any"
            value={form.unit_dedup_window}
            onInput={set('unit_dedup_window')}
            hint="Days after the unit’s first exposure that count, e.g. 7."
          />
          <Field label="Property path" value={form.property_path} onInput={set('property_path')} hint="For sum and mean: where the number is, e.g. amount." />
          {form.kind === 'binary' ? null : (
            <Field label="Unit" value={form.unit} maxLength={16} onInput={set('unit')} hint="Shown beside the values, e.g. ms or USD (optional)." />
          )}
        </div>
      )}
      {form.kind === 'quantile' ? <QuantileFields form={form} bind={set} /> : null}
      <DirectionAndCapping form={form} bind={set} kind={form.kind} />
      <Field label="Description" value={form.description} onInput={set('description')} />
    </FormCard>
  );
}

export function Metrics() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Metric>>('GET', `/v1/metrics${query({ cursor })}`), [cursor]);
  const all = useResource(() => api<Page<Metric>>('GET', '/v1/metrics?limit=200'), []);
  const reload = () => {
    list.reload();
    all.reload();
  };
  return (
    <>
      <PageTitle>Metrics</PageTitle>
      <ListView list={list} empty="No metrics yet." pager={pager}>
        {(rows) => (
          <Table caption="Metrics" columns={['Name', 'Key', 'Event', 'Kind', 'Aggregation', 'Direction', 'Capping', 'Window', 'Created']}>
            {rows.map((m) => (
              <tr key={m.id}>
                <td>
                  <Link href={`/metrics/${m.id}`}>{m.name}</Link>
                </td>
                <td>
                  <code>{m.key}</code>
                </td>
                <td>{m.event_key ? <code>{m.event_key}</code> : '—'}</td>
                <td>
                  {m.kind === 'quantile' && m.quantile !== undefined ? `quantile ${percentileLabel(m.quantile)} (${m.quantile_level ?? 'event'})` : m.kind}
                </td>
                <td>
                  {m.aggregation}
                  {m.property_path ? ` of ${m.property_path}` : ''}
                </td>
                <td>{m.higher_is_better ? 'higher is better' : 'lower is better'}</td>
                <td>{m.capping ? `${m.capping.type} ${m.capping.value}` : '—'}</td>
                <td>{m.kind === 'ratio' ? '—' : durationWords(m.unit_dedup_window)}</td>
                <td>{dateTime(m.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <MetricForm onCreated={reload} metrics={all.data?.data ?? []} />
    </>
  );
}
