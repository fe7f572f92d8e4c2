import { useState } from 'preact/hooks';
import { api, query, type Page } from '../../api.js';
import { ErrorBox, Field, FormCard, ListView, PageTitle, Select, Table, TextArea, usePager } from '../../components/ui.js';
import { dateTime } from '../../format.js';
import { useAction, useResource } from '../../hooks.js';
import { Link } from '../../router.js';
import type { DataSource, FactColumn, FactTable, FactTableSummary } from './types.js';

const blank = { data_source_id: '', name: '', sql: '', unit_id_column: '', timestamp_column: '', restatement_hours: '48' };

/** The columns the source described, with what Verdict can do with each. */
function ColumnPreview({ table }: { table: FactTable }) {
  return (
    <Table caption={`Columns of ${table.name}`} columns={['Column', 'Type', 'Use']}>
      {table.columns.map((column: FactColumn) => (
        <tr key={column.name}>
          <td>
            <code>{column.name}</code>
          </td>
          <td>{column.type}</td>
          <td>{column.name === table.unit_id_column ? 'unit id' : column.name === table.timestamp_column ? 'timestamp' : column.kind}</td>
        </tr>
      ))}
    </Table>
  );
}

/** Rows, units and the time range, counted by the source. */
function SummaryButton({ table }: { table: FactTable }) {
  const action = useAction();
  const [summary, setSummary] = useState<FactTableSummary | null>(null);
  const run = () => action.run(async () => setSummary(await api<FactTableSummary>('POST', `/v1/fact-tables/${table.id}/summary`)));
  return (
    <p>
      <button type="button" disabled={action.busy} onClick={() => void run()}>
        {action.busy ? 'Counting…' : 'Count rows'}
      </button>{' '}
      <span role="status" data-testid={`summary-${table.id}`}>
        {summary ? `${summary.rows} rows, ${summary.units} units, ${summary.first_timestamp ?? '—'} to ${summary.last_timestamp ?? '—'}` : null}
      </span>
      <ErrorBox error={action.error} />
    </p>
  );
}

/** The fact tables, each with its source and a button that counts its rows there. */
function FactTableRows({ rows, sourceName }: { rows: FactTable[]; sourceName: (id: string) => string }) {
  return (
    <Table caption="Fact tables" columns={['Name', 'Source', 'Unit id', 'Timestamp', 'Late rows re-read', 'Columns', 'Updated', { hidden: 'Rows' }]}>
      {rows.map((table) => (
        <tr key={table.id}>
          <td>{table.name}</td>
          <td>{sourceName(table.data_source_id)}</td>
          <td>
            <code>{table.unit_id_column}</code>
          </td>
          <td>
            <code>{table.timestamp_column}</code>
          </td>
          <td>{table.restatement_hours} h</td>
          <td>{table.columns.map((column) => column.name).join(', ')}</td>
          <td>{dateTime(table.updated_at)}</td>
          <td>
            <SummaryButton table={table} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** Fact tables: SQL over a data source, described by the source when saved. */
export function FactTables() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<FactTable>>('GET', `/v1/fact-tables${query({ cursor })}`), [cursor]);
  const sources = useResource(() => api<Page<DataSource>>('GET', '/v1/data-sources?limit=200'), []);
  const [form, setForm] = useState(blank);
  const [created, setCreated] = useState<FactTable | null>(null);
  const set = (name: keyof typeof blank) => (event: { currentTarget: { value: string } }) => setForm({ ...form, [name]: event.currentTarget.value });
  const options = (sources.data?.data ?? []).map((source) => ({ value: source.id, label: source.name }));
  const sourceName = (id: string) => sources.data?.data.find((source) => source.id === id)?.name ?? id;
  const create = async () => {
    // A blank or non-numeric entry goes to the server as is, whose 422 names /restatement_hours.
    const hours = form.restatement_hours.trim() === '' ? form.restatement_hours : Number(form.restatement_hours);
    const body = { ...form, restatement_hours: hours, data_source_id: form.data_source_id || (options[0]?.value ?? '') };
    setCreated(await api<FactTable>('POST', '/v1/fact-tables', body));
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Fact tables</PageTitle>
      <p class="muted">
        One read-only <code>SELECT</code> over a <Link href="/data-sources">data source</Link> returning a unit id, a timestamp and numeric or string columns.
        Verdict describes its columns on the source without reading rows, and refuses anything that writes, locks or has side effects.
      </p>
      {created ? (
        <div data-testid="created-fact-table">
          <p>
            <strong>{created.name}</strong> saved; the source describes it as:
          </p>
          <ColumnPreview table={created} />
        </div>
      ) : null}
      <ListView list={list} empty="No fact tables yet." pager={pager}>
        {(rows) => <FactTableRows rows={rows} sourceName={sourceName} />}
      </ListView>
      <FormCard id="new-fact-table" title="New fact table" submitLabel="Describe and save" onSubmit={create} ready={options.length > 0}>
        <div class="row">
          <Field label="Name" required maxLength={200} value={form.name} onInput={set('name')} />
          <Select label="Data source" options={options} value={form.data_source_id || options[0]?.value} onChange={set('data_source_id')} />
        </div>
        <TextArea label="SQL" required rows={6} spellcheck={false} value={form.sql} onInput={set('sql')} hint="One SELECT in the source’s dialect." />
        <div class="row">
          <Field label="Unit id column" required value={form.unit_id_column} onInput={set('unit_id_column')} />
          <Field label="Timestamp column" required value={form.timestamp_column} onInput={set('timestamp_column')} />
          <Field
            label="Late rows re-read (hours)"
            type="number"
            min={0}
            max={8760}
            step={1}
            value={form.restatement_hours}
            onInput={set('restatement_hours')}
            hint="Each refresh reads rows this recent again, so late rows count; older ones wait for a full refresh."
          />
        </div>
      </FormCard>
    </>
  );
}
