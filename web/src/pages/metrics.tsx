import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import type { Metric } from '../types.js';

const kinds = [
  { value: 'binary', label: 'binary — did the unit convert' },
  { value: 'count', label: 'count — events per unit' },
  { value: 'revenue', label: 'revenue — a number per unit' },
  { value: 'duration', label: 'duration — a number per unit' },
];
const aggregations = ['count', 'sum', 'mean'].map((value) => ({ value, label: value }));
const blank = { key: '', name: '', event_key: '', kind: 'binary', aggregation: 'count', unit_dedup_window: 'P7D', property_path: '' };

function MetricForm({ onCreated }: { onCreated: () => void }) {
  const { form, setForm, bind: set } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/metrics', { ...form, property_path: form.property_path || null });
    setForm(blank);
    onCreated();
  };
  return (
    <FormCard id="new-metric" title="New metric" submitLabel="Create metric" onSubmit={create}>
      <div class="row">
        <Field label="Key" required pattern="[a-z0-9._-]{1,128}" value={form.key} onInput={set('key')} />
        <Field label="Name" required value={form.name} onInput={set('name')} />
        <Field label="Event key" required pattern="[a-z0-9._-]{1,128}" value={form.event_key} onInput={set('event_key')} hint="The event_key of the events it counts." />
      </div>
      <div class="row">
        <Select label="Kind" value={form.kind} options={kinds} onChange={set('kind')} />
        <Select label="Aggregation" value={form.aggregation} options={aggregations} onChange={set('aggregation')} />
        <Field label="Per-unit window" value={form.unit_dedup_window} onInput={set('unit_dedup_window')} hint="ISO 8601 duration after the first exposure, e.g. P7D." />
        <Field label="Property path" value={form.property_path} onInput={set('property_path')} hint="For sum and mean: where the number is, e.g. amount." />
      </div>
    </FormCard>
  );
}

export function Metrics() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Metric>>('GET', `/v1/metrics${query({ cursor })}`), [cursor]);
  return (
    <>
      <PageTitle>Metrics</PageTitle>
      <ListView list={list} empty="No metrics yet." pager={pager}>
        {(rows) => (
          <Table caption="Metrics" columns={['Name', 'Key', 'Event', 'Kind', 'Aggregation', 'Window', 'Created']}>
            {rows.map((m) => (
              <tr key={m.id}>
                <td>{m.name}</td>
                <td>
                  <code>{m.key}</code>
                </td>
                <td>
                  <code>{m.event_key}</code>
                </td>
                <td>{m.kind}</td>
                <td>
                  {m.aggregation}
                  {m.property_path ? ` of ${m.property_path}` : ''}
                </td>
                <td>{m.unit_dedup_window}</td>
                <td>{dateTime(m.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <MetricForm onCreated={list.reload} />
    </>
  );
}
