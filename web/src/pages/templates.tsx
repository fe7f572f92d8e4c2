import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Table, TextArea, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Template } from '../types.js';

const EXAMPLE = '# Offer for {{customer.name}}\n\nTotal: {{total}}\n\n{{#each items}}\n- {{name}}: {{price}}\n{{/each}}\n';

export function Templates() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Template>>('GET', `/v1/templates${query({ cursor })}`), [cursor]);
  const { form, bind } = useFormFields({ name: '', body: EXAMPLE });
  const create = async () => {
    const created = await api<Template>('POST', '/v1/templates', form);
    navigate(`/templates/${created.id}`);
  };
  return (
    <>
      <PageTitle>Templates</PageTitle>
      <p class="muted">Markdown with Handlebars merge fields. Edit the draft freely; freeze it into an immutable version to render it.</p>
      <ListView list={list} empty="No templates yet." pager={pager}>
        {(rows) => (
          <Table caption="Templates" columns={['Name', 'Latest version', 'Draft updated']}>
            {rows.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link href={`/templates/${t.id}`}>{t.name}</Link>
                </td>
                <td>{t.latest_version ?? <span class="muted">none frozen</span>}</td>
                <td>{dateTime(t.updated_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-template" title="New template" submitLabel="Create draft" onSubmit={create}>
        <Field label="Name" required value={form.name} onInput={bind('name')} />
        <TextArea label="Body" class="mono" rows={8} value={form.body} onInput={bind('body')} />
      </FormCard>
    </>
  );
}
