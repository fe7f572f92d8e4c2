import { KEY_PATTERN } from '../patterns.js';
import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import type { MutexGroup } from '../types.js';

export function MutexGroups() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<MutexGroup>>('GET', `/v1/mutex-groups${query({ cursor })}`), [cursor]);
  const blank = { key: '', name: '' };
  const { form, setForm, bind } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/mutex-groups', form);
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Mutex groups</PageTitle>
      <p class="muted">Experiments in one group are mutually exclusive: a unit takes part in at most one of them.</p>
      <ListView list={list} empty="No mutex groups yet." pager={pager}>
        {(rows) => (
          <Table caption="Mutex groups" columns={['Name', 'Key', 'Experiments', 'Created']}>
            {rows.map((g) => (
              <tr key={g.id}>
                <td>{g.name}</td>
                <td>
                  <code>{g.key}</code>
                </td>
                <td>{g.experiment_count}</td>
                <td>{dateTime(g.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-group" title="New mutex group" submitLabel="Create group" onSubmit={create}>
        <div class="row">
          <Field label="Key" required pattern={KEY_PATTERN} value={form.key} onInput={bind('key')} />
          <Field label="Name" required value={form.name} onInput={bind('name')} />
        </div>
      </FormCard>
    </>
  );
}
