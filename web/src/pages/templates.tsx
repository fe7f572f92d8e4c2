import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, ListView, PageTitle, Table, TextArea, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Template } from '../types.js';

const EXAMPLE = '# Offer for {{customer.name}}\n\nTotal: {{total}}\n\n{{#each items}}\n- {{name}}: {{price}}\n{{/each}}\n';

export function Templates() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Template>>('GET', `/v1/templates${query({ cursor })}`), [cursor]);
  const [form, setForm] = useState({ name: '', body: EXAMPLE });
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<Template>('POST', '/v1/templates', form);
      navigate(`/templates/${created.id}`);
    });
  };
  return (
    <>
      <PageTitle>Templates</PageTitle>
      <p class="muted">Markdown with Handlebars merge fields. Edit the draft freely; freeze it into an immutable version to render it.</p>
      <ListView list={list} empty="No templates yet." pager={pager}>
        {(rows) => (
          <Table caption="Templates">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Latest version</th>
                <th scope="col">Draft updated</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((t) => (
                <tr key={t.id}>
                  <td>
                    <Link href={`/templates/${t.id}`}>{t.name}</Link>
                  </td>
                  <td>{t.latest_version ?? <span class="muted">none frozen</span>}</td>
                  <td>{dateTime(t.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </ListView>
      <form class="card" onSubmit={submit} aria-labelledby="new-template">
        <h2 id="new-template">New template</h2>
        <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        <TextArea label="Body" class="mono" rows={8} value={form.body} onInput={(e) => setForm({ ...form, body: e.currentTarget.value })} />
        <ErrorBox error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create draft
        </button>
      </form>
    </>
  );
}
