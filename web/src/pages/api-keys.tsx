import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { Checkbox, ErrorBox, Field, FormCard, Loading, PageTitle, SecretOnce, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useFormFields, useResource } from '../hooks.js';
import { currentSession } from '../session.js';
import type { ApiKey, Environment, NewApiKey } from '../types.js';

function KeyForm({ environments, onCreated }: { environments: Environment[]; onCreated: (key: NewApiKey) => void }) {
  const { form, setForm, bind } = useFormFields({ name: '', kind: 'server', environment_id: '' });
  const create = async () => {
    onCreated(await api<NewApiKey>('POST', '/v1/api-keys', { name: form.name, kind: form.kind, environment_id: form.environment_id || null }));
    setForm({ ...form, name: '' });
  };
  return (
    <FormCard id="new-key" title="New API key" submitLabel="Create key" onSubmit={create}>
      <div class="row">
        <Field label="Name" required value={form.name} onInput={bind('name')} hint="Who or what uses it, e.g. checkout-service." />
        <Select
          label="Kind"
          value={form.kind}
          options={[
            { value: 'server', label: 'server — every operation' },
            { value: 'client', label: 'client — assign, events, exposures only' },
          ]}
          onChange={bind('kind')}
        />
        <Select
          label="Environment"
          value={form.environment_id}
          options={[{ value: '', label: 'All environments' }, ...environments.map((env) => ({ value: env.id, label: env.name }))]}
          onChange={bind('environment_id')}
        />
      </div>
    </FormCard>
  );
}

function KeyRow({
  apiKey: key,
  isCurrent,
  environmentName,
  busy,
  onRevoke,
}: {
  apiKey: ApiKey;
  isCurrent: boolean;
  environmentName: string;
  busy: boolean;
  onRevoke: () => void;
}) {
  return (
    <tr>
      <td>
        {key.name}
        {isCurrent ? <span class="muted"> (you)</span> : null}
      </td>
      <td>
        <code>
          {key.prefix}…{key.last_four}
        </code>
      </td>
      <td>{key.kind}</td>
      <td>{environmentName}</td>
      <td>{dateTime(key.created_at)}</td>
      <td>{dateTime(key.last_used_at)}</td>
      <td>
        {key.revoked_at ? (
          <span class="muted">revoked {dateTime(key.revoked_at)}</span>
        ) : (
          <button type="button" class="danger" aria-label={`Revoke ${key.name}`} disabled={busy} onClick={onRevoke}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

export function ApiKeys() {
  const currentKeyId = currentSession.keyId;
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const { cursor, pager } = usePager([includeRevoked]);
  const list = useResource(
    () => api<Page<ApiKey>>('GET', `/v1/api-keys${query({ cursor, include_revoked: includeRevoked || undefined })}`),
    [cursor, includeRevoked],
  );
  const environments = useResource(() => api<Page<Environment>>('GET', '/v1/environments?limit=200'), []);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const action = useAction();
  const envName = (id: string | null) => (id ? (environments.data?.data.find((e) => e.id === id)?.name ?? id) : 'all');

  const revoke = (key: ApiKey) => {
    const own = key.id === currentKeyId ? ' This is the key you are signed in with: you will be signed out.' : '';
    if (!confirm(`Revoke "${key.name}" (${key.prefix}…${key.last_four})? Anything using it stops working within seconds.${own}`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/api-keys/${key.id}`);
      list.reload();
    });
  };

  return (
    <>
      <PageTitle>API keys</PageTitle>
      {created?.key ? <SecretOnce label={`New key "${created.name}"`} secret={created.key} onDone={() => setCreated(null)} /> : null}
      <Checkbox label="Show revoked keys" checked={includeRevoked} onChange={setIncludeRevoked} />
      <ErrorBox error={list.error ?? action.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data ? (
        <Table caption="API keys" columns={['Name', 'Key', 'Kind', 'Environment', 'Created', 'Last used', 'Action']}>
          {list.data.data.map((key) => (
            <KeyRow
              key={key.id}
              apiKey={key}
              isCurrent={key.id === currentKeyId}
              environmentName={envName(key.environment_id)}
              busy={action.busy}
              onRevoke={() => revoke(key)}
            />
          ))}
        </Table>
      ) : null}
      {list.data ? pager(list.data.next_cursor) : null}
      <KeyForm
        environments={environments.data?.data ?? []}
        onCreated={(key) => {
          setCreated(key);
          list.reload();
        }}
      />
    </>
  );
}
