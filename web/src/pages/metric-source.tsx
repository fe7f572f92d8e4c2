// Where a metric's rows come from: events (an event key) or a fact table on a data source
// (docs/warehouse.md), in the metric form and the list.
import { api, type Page } from '../api.js';
import { Field, Select } from '../components/ui.js';
import { useResource } from '../hooks.js';
import type { Metric } from '../types.js';
import type { DataSource, FactTable } from './warehouse/types.js';

export interface SourceFields {
  reads: string;
  fact_table_id: string;
  column: string;
  filter: string;
}

export const readsOptions = [
  { value: 'events', label: 'events sent to Verdict' },
  { value: 'fact', label: 'a fact table on a data source' },
];

/** The workspace's fact tables and data sources, for choosing one and naming what a metric reads. */
export function useWarehouse() {
  const tables = useResource(() => api<Page<FactTable>>('GET', '/v1/fact-tables?limit=200'), []);
  const sources = useResource(() => api<Page<DataSource>>('GET', '/v1/data-sources?limit=200'), []);
  return { tables: tables.data?.data ?? [], sources: sources.data?.data ?? [] };
}

/** The fact table, its number column (sum and mean) and the row filter. */
export function FactFields({
  form,
  bind,
  aggregation,
  tables,
}: {
  form: SourceFields;
  bind: (name: keyof SourceFields) => (event: { currentTarget: { value: string } }) => void;
  aggregation: string;
  tables: FactTable[];
}) {
  const table = tables.find((item) => item.id === form.fact_table_id);
  const numbers = (table?.columns ?? []).filter((column) => column.kind === 'number');
  return (
    <div class="row">
      <Select
        label="Fact table"
        required
        value={form.fact_table_id}
        options={[{ value: '', label: 'Choose a fact table' }, ...tables.map((item) => ({ value: item.id, label: item.name }))]}
        onChange={bind('fact_table_id')}
      />
      {aggregation === 'count' ? null : (
        <Select
          label="Column"
          required
          value={form.column}
          options={[
            { value: '', label: 'Choose a number column' },
            ...numbers.map((column) => ({ value: column.name, label: `${column.name} (${column.type})` })),
          ]}
          onChange={bind('column')}
          hint="Summed or averaged per unit."
        />
      )}
      <Field label="Row filter" value={form.filter} onInput={bind('filter')} hint="A SQL condition over its columns, e.g. status = 'paid' (optional)." />
    </div>
  );
}

/** What the metric reads, as the list shows it: the event key, or the fact table and its data source. */
export function readsText(metric: Metric, tables: FactTable[], sources: DataSource[]): string {
  if (metric.kind === 'ratio') return 'its two metrics';
  if (metric.fact_table_id === null) return `events ${metric.event_key ?? ''}`;
  const table = tables.find((item) => item.id === metric.fact_table_id);
  const source = sources.find((item) => item.id === table?.data_source_id);
  const filter = metric.filter ? ` where ${metric.filter}` : '';
  return `fact table ${table?.name ?? metric.fact_table_id} on ${source?.name ?? 'its data source'}${filter}`;
}
