// Holdouts: the list, and the form that creates one (a draft; it holds nobody out until started).
import { api, query, type Page } from '../api.js';
import { Field, FormCard, ListView, PageTitle, Select, StatusBadge, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Environment, Holdout } from '../types.js';

const unitTypes = ['user', 'account', 'session', 'device', 'custom_attribute'].map((value) => ({ value, label: value }));

export function describeCoverage(holdout: Holdout): string {
  if (holdout.coverage === 'listed') return `${holdout.experiment_ids?.length ?? 0} listed experiment${holdout.experiment_ids?.length === 1 ? '' : 's'}`;
  return 'every experiment started after it';
}

function NewHoldoutForm({ environments }: { environments: Environment[] }) {
  const { form, bind } = useFormFields({ name: '', environment_id: '', unit_type: 'user', percent: '5' });
  const create = async () => {
    const environmentId = form.environment_id || environments[0]?.id || '';
    const created = await api<Holdout>('POST', '/v1/holdouts', {
      name: form.name,
      environment_id: environmentId,
      unit_type: form.unit_type,
      percent: Number(form.percent),
    });
    navigate(`/holdouts/${created.id}`);
  };
  return (
    <FormCard id="new-holdout" title="New holdout" submitLabel="Create holdout" onSubmit={create}>
      <div class="row">
        <Field label="Name" required value={form.name} onInput={bind('name')} />
        <Select
          label="Environment"
          value={form.environment_id || environments[0]?.id || ''}
          options={environments.map((env) => ({ value: env.id, label: env.name }))}
          onChange={bind('environment_id')}
        />
        <Select label="Unit type" value={form.unit_type} options={unitTypes} onChange={bind('unit_type')} />
        <Field label="Percent held out" type="number" min={0.5} max={20} step={0.01} required value={form.percent} onInput={bind('percent')} hint="0.5 to 20" />
      </div>
    </FormCard>
  );
}

export function Holdouts() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Holdout>>('GET', `/v1/holdouts${query({ cursor })}`), [cursor]);
  const environments = useResource(() => api<Page<Environment>>('GET', '/v1/environments?limit=200'), []);
  const environmentName = (id: string) => environments.data?.data.find((env) => env.id === id)?.name ?? '…';
  return (
    <>
      <PageTitle>Holdouts</PageTitle>
      <p class="muted">
        A holdout keeps a share of an environment’s units on the control of every experiment it covers, launches included, to measure what the launches add up
        to.
      </p>
      <ListView list={list} empty="No holdouts yet." pager={pager}>
        {(rows) => (
          <Table caption="Holdouts" columns={['Name', 'Status', 'Held out', 'Covers', 'Environment', 'Started']}>
            {rows.map((h) => (
              <tr key={h.id} data-testid={`holdout-row-${h.id}`}>
                <td>
                  <Link href={`/holdouts/${h.id}`}>{h.name}</Link>
                </td>
                <td>
                  <StatusBadge status={h.status} />
                </td>
                <td>
                  {h.percent}% of {h.unit_type} units
                </td>
                <td>{describeCoverage(h)}</td>
                <td>{environmentName(h.environment_id)}</td>
                <td>{dateTime(h.started_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <NewHoldoutForm environments={environments.data?.data ?? []} />
    </>
  );
}
