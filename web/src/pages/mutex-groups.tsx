import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import type { MutexGroup } from '../types.js';

export function MutexGroups() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<MutexGroup>>('GET', `/v1/mutex-groups${query({ cursor })}`), [cursor]);
  const [form, setForm] = useState({ key: '', name: '' });
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('POST', '/v1/mutex-groups', form);
      setForm({ key: '', name: '' });
      list.reload();
    });
  };
  return (
    <>
      <PageTitle>Mutex groups</PageTitle>
      <p class="muted">Experiments in one group are mutually exclusive: a unit takes part in at most one of them.</p>
      <ListView list={list} empty="No mutex groups yet." pager={pager}>
        {(rows) => (
          <Table caption="Mutex groups">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Experiments</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </Table>
        )}
      </ListView>
      <form class="card" onSubmit={submit} aria-labelledby="new-group">
        <h2 id="new-group">New mutex group</h2>
        <div class="row">
          <Field label="Key" required pattern="[a-z0-9._-]{1,128}" value={form.key} onInput={(e) => setForm({ ...form, key: e.currentTarget.value })} />
          <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </div>
        <ErrorBox error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create group
        </button>
      </form>
    </>
  );
}
