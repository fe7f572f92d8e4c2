import { useState } from 'preact/hooks';
import { api, query, type Page } from '../../api.js';
import { ErrorBox, Field, FormCard, ListView, PageTitle, Select, Table, usePager } from '../../components/ui.js';
import { dateTime } from '../../format.js';
import { useAction, useFormFields, useResource } from '../../hooks.js';
import { Link } from '../../router.js';
import type { DataSource, DataSourceTest } from './types.js';

const blank = { name: '', kind: 'postgres', url: '' };
const KINDS = [
  { value: 'postgres', label: 'PostgreSQL' },
  { value: 'clickhouse', label: 'ClickHouse' },
];

/** One source's test: connects and shows the server's version, or why it could not. */
function TestButton({ source }: { source: DataSource }) {
  const action = useAction();
  const [result, setResult] = useState<DataSourceTest | null>(null);
  const test = () => action.run(async () => setResult(await api<DataSourceTest>('POST', `/v1/data-sources/${source.id}/test`)));
  return (
    <>
      <button type="button" disabled={action.busy} onClick={() => void test()} aria-label={`Test ${source.name}`}>
        {action.busy ? 'Testing…' : 'Test'}
      </button>{' '}
      <span role="status" data-testid={`test-${source.id}`}>
        {result ? (result.ok ? `connected: version ${result.server_version ?? '?'} (${result.duration_ms} ms)` : `failed: ${result.error ?? ''}`) : null}
      </span>
      <ErrorBox error={action.error} />
    </>
  );
}

/** Warehouse sources: the team's own PostgreSQL or ClickHouse that fact tables read, read-only. */
export function DataSources() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<DataSource>>('GET', `/v1/data-sources${query({ cursor })}`), [cursor]);
  const { form, setForm, bind } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/data-sources', form);
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Data sources</PageTitle>
      <p class="muted">
        Your own PostgreSQL or ClickHouse, read with read-only statements under a time limit. The connection URL is stored encrypted and shown masked; hosts on
        private networks are refused unless the server allows them. Define <Link href="/fact-tables">fact tables</Link> over a source.
      </p>
      <ListView list={list} empty="No data sources yet." pager={pager}>
        {(rows) => (
          <Table caption="Data sources" columns={['Name', 'Kind', 'URL', 'Created', { hidden: 'Test' }]}>
            {rows.map((source) => (
              <tr key={source.id}>
                <td>{source.name}</td>
                <td>{source.kind === 'postgres' ? 'PostgreSQL' : 'ClickHouse'}</td>
                <td>
                  <code>{source.url}</code>
                </td>
                <td>{dateTime(source.created_at)}</td>
                <td>
                  <TestButton source={source} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-data-source" title="New data source" submitLabel="Add data source" onSubmit={create}>
        <div class="row">
          <Field label="Name" required maxLength={200} value={form.name} onInput={bind('name')} />
          <Select label="Kind" options={KINDS} value={form.kind} onChange={bind('kind')} />
        </div>
        <Field
          label="Connection URL"
          required
          type="password"
          autoComplete="off"
          value={form.url}
          hint={
            form.kind === 'postgres'
              ? 'postgres://user:password@host:5432/database (optionally ?sslmode=verify-full)'
              : 'http(s)://user:password@host:8123/database'
          }
          onInput={bind('url')}
        />
      </FormCard>
    </>
  );
}
