import { useState } from 'preact/hooks';
import { api, query, type Page } from '../../api.js';
import { ErrorBox, Field, FormCard, ListView, PageTitle, Select, Table, TextArea, usePager } from '../../components/ui.js';
import { dateTime } from '../../format.js';
import { useAction, useResource } from '../../hooks.js';
import { Link } from '../../router.js';
import type { AssignmentSource, AssignmentSourceSummary, DataSource } from './types.js';

const blank = { data_source_id: '', name: '', sql: '', unit_id_column: '', experiment_key_column: '', variant_key_column: '', timestamp_column: '' };

/** What each described column is to Verdict: one of the four it reads, or only returned. */
function roleOf(source: AssignmentSource, name: string, kind: string): string {
  if (name === source.unit_id_column) return 'unit id';
  if (name === source.experiment_key_column) return 'experiment key';
  if (name === source.variant_key_column) return 'variant key';
  if (name === source.timestamp_column) return 'timestamp';
  return `${kind} (not read)`;
}

function ColumnPreview({ source }: { source: AssignmentSource }) {
  return (
    <Table caption={`Columns of ${source.name}`} columns={['Column', 'Type', 'Use']}>
      {source.columns.map((column) => (
        <tr key={column.name}>
          <td>
            <code>{column.name}</code>
          </td>
          <td>{column.type}</td>
          <td>{roleOf(source, column.name, column.kind)}</td>
        </tr>
      ))}
    </Table>
  );
}

function summaryText(summary: AssignmentSourceSummary): string {
  if (summary.experiments.length === 0) return 'no exposures';
  return summary.experiments
    .map((experiment) => {
      const variants = experiment.variants.map((variant) => `${variant.variant_key} ${variant.units}`).join(', ');
      return `${experiment.experiment_key}: ${experiment.units} units (${variants}; ${experiment.units_in_several_variants} in several variants)`;
    })
    .join('; ');
}

/** Units per experiment key and variant of first exposure, counted by the source. */
function SummaryButton({ source }: { source: AssignmentSource }) {
  const action = useAction();
  const [summary, setSummary] = useState<AssignmentSourceSummary | null>(null);
  const run = () => action.run(async () => setSummary(await api<AssignmentSourceSummary>('POST', `/v1/assignment-sources/${source.id}/summary`)));
  return (
    <p>
      <button type="button" aria-label={`Count units of ${source.name}`} disabled={action.busy} onClick={() => void run()}>
        {action.busy ? 'Counting…' : 'Count units'}
      </button>{' '}
      <span role="status">{summary ? summaryText(summary) : null}</span>
      <ErrorBox error={action.error} />
    </p>
  );
}

function AssignmentSourceRows({ rows, sourceName }: { rows: AssignmentSource[]; sourceName: (id: string) => string }) {
  return (
    <Table caption="Assignment sources" columns={['Name', 'Source', 'Unit id', 'Experiment key', 'Variant key', 'Timestamp', 'Updated', { hidden: 'Units' }]}>
      {rows.map((source) => (
        <tr key={source.id}>
          <td>{source.name}</td>
          <td>{sourceName(source.data_source_id)}</td>
          {[source.unit_id_column, source.experiment_key_column, source.variant_key_column, source.timestamp_column].map((column) => (
            <td key={column}>
              <code>{column}</code>
            </td>
          ))}
          <td>{dateTime(source.updated_at)}</td>
          <td>
            <SummaryButton source={source} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** Assignment sources: who was exposed to which variant of which experiment, for experiments assigned elsewhere. */
export function AssignmentSources() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<AssignmentSource>>('GET', `/v1/assignment-sources${query({ cursor })}`), [cursor]);
  const sources = useResource(() => api<Page<DataSource>>('GET', '/v1/data-sources?limit=200'), []);
  const [form, setForm] = useState(blank);
  const [created, setCreated] = useState<AssignmentSource | null>(null);
  const set = (name: keyof typeof blank) => (event: { currentTarget: { value: string } }) => setForm({ ...form, [name]: event.currentTarget.value });
  const options = (sources.data?.data ?? []).map((source) => ({ value: source.id, label: source.name }));
  const sourceName = (id: string) => sources.data?.data.find((source) => source.id === id)?.name ?? id;
  const create = async () => {
    const body = { ...form, data_source_id: form.data_source_id || (options[0]?.value ?? '') };
    setCreated(await api<AssignmentSource>('POST', '/v1/assignment-sources', body));
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Assignment sources</PageTitle>
      <p class="muted">
        For experiments assigned elsewhere: one read-only <code>SELECT</code> over a <Link href="/data-sources">data source</Link> returning, one row per
        exposure, the unit id, the experiment’s key, the variant’s key and the time. An experiment created with it is analysis-only: Verdict assigns none of its
        units, and each snapshot reads their first exposures from the source.
      </p>
      {created ? (
        <div data-testid="created-assignment-source">
          <p>
            <strong>{created.name}</strong> saved; the source describes it as:
          </p>
          <ColumnPreview source={created} />
        </div>
      ) : null}
      <ListView list={list} empty="No assignment sources yet." pager={pager}>
        {(rows) => <AssignmentSourceRows rows={rows} sourceName={sourceName} />}
      </ListView>
      <FormCard id="new-assignment-source" title="New assignment source" submitLabel="Describe and save" onSubmit={create} ready={options.length > 0}>
        <div class="row">
          <Field label="Name" required maxLength={200} value={form.name} onInput={set('name')} />
          <Select label="Data source" options={options} value={form.data_source_id || options[0]?.value} onChange={set('data_source_id')} />
        </div>
        <TextArea
          label="SQL"
          required
          rows={6}
          spellcheck={false}
          value={form.sql}
          onInput={set('sql')}
          hint="One SELECT in the source’s dialect, a row per exposure."
        />
        <div class="row">
          <Field label="Unit id column" required value={form.unit_id_column} onInput={set('unit_id_column')} />
          <Field label="Experiment key column" required value={form.experiment_key_column} onInput={set('experiment_key_column')} />
        </div>
        <div class="row">
          <Field label="Variant key column" required value={form.variant_key_column} onInput={set('variant_key_column')} />
          <Field label="Timestamp column" required value={form.timestamp_column} onInput={set('timestamp_column')} />
        </div>
      </FormCard>
    </>
  );
}
