import { ENVIRONMENT_SLUG_PATTERN } from '../patterns.js';
import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import type { Environment } from '../types.js';

const blank = { name: '', slug: '' };

export function Environments() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Environment>>('GET', `/v1/environments${query({ cursor })}`), [cursor]);
  const { form, setForm, bind } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/environments', form);
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Environments</PageTitle>
      <p class="muted">Deployment stages of this workspace. An experiment runs in one; an API key may be bound to one (its slug is part of the key).</p>
      <ListView list={list} empty="No environments yet." pager={pager}>
        {(rows) => (
          <Table caption="Environments" columns={['Name', 'Slug', 'Created']}>
            {rows.map((environment) => (
              <tr key={environment.id}>
                <td>{environment.name}</td>
                <td>
                  <code>{environment.slug}</code>
                </td>
                <td>{dateTime(environment.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-environment" title="New environment" submitLabel="Create environment" onSubmit={create}>
        <div class="row">
          <Field label="Name" required value={form.name} onInput={bind('name')} />
          <Field
            label="Slug"
            required
            pattern={ENVIRONMENT_SLUG_PATTERN}
            value={form.slug}
            hint='Lowercase letters, digits and dashes; "all" is reserved.'
            onInput={bind('slug')}
          />
        </div>
      </FormCard>
    </>
  );
}
