import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import type { Environment } from '../types.js';

const blank = { name: '', slug: '' };

export function Environments() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Environment>>('GET', `/v1/environments${query({ cursor })}`), [cursor]);
  const [form, setForm] = useState(blank);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('POST', '/v1/environments', form);
      setForm(blank);
      list.reload();
    });
  };
  return (
    <>
      <PageTitle>Environments</PageTitle>
      <p class="muted">Deployment stages of this workspace. An experiment runs in one; an API key may be bound to one (its slug is part of the key).</p>
      <ListView list={list} empty="No environments yet." pager={pager}>
        {(rows) => (
          <Table caption="Environments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((environment) => (
                <tr key={environment.id}>
                  <td>{environment.name}</td>
                  <td>
                    <code>{environment.slug}</code>
                  </td>
                  <td>{dateTime(environment.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </ListView>
      <form class="card" onSubmit={submit} aria-labelledby="new-environment">
        <h2 id="new-environment">New environment</h2>
        <div class="row">
          <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
          <Field
            label="Slug"
            required
            pattern="[a-z0-9-]{1,32}"
            value={form.slug}
            hint='Lowercase letters, digits and dashes; "all" is reserved.'
            onInput={(e) => setForm({ ...form, slug: e.currentTarget.value })}
          />
        </div>
        <ErrorBox error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create environment
        </button>
      </form>
    </>
  );
}
