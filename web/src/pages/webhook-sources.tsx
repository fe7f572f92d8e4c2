import { SOURCE_SLUG_PATTERN } from '../patterns.js';
import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { Checkbox, Field, FormCard, ListView, PageTitle, SecretOnce, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { NewWebhookSource, WebhookSource } from '../types.js';

export function inboundUrl(source: WebhookSource, workspaceId?: string): string {
  const path = source.inbound_path ?? `/webhooks/inbound/${workspaceId ?? '{workspace_id}'}/${source.slug}`;
  return `${location.origin}${path}`;
}

export function WebhookSources() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<WebhookSource>>('GET', `/v1/webhook-sources${query({ cursor })}`), [cursor]);
  const [form, setForm] = useState({ slug: '', name: '', enabled: true });
  const [created, setCreated] = useState<NewWebhookSource | null>(null);
  const create = async () => {
    setCreated(await api<NewWebhookSource>('POST', '/v1/webhook-sources', form));
    setForm({ slug: '', name: '', enabled: true });
    list.reload();
  };
  return (
    <>
      <PageTitle>Webhook sources</PageTitle>
      <p class="muted">
        Senders of signed inbound webhooks. Each posts events to its own URL, signed with its secret in <code>X-Service-Signature</code>.
      </p>
      {created?.inbound_secret ? (
        <SecretOnce
          label={`Inbound secret of "${created.name}" (posts to ${inboundUrl(created)})`}
          secret={created.inbound_secret}
          onDone={() => setCreated(null)}
        />
      ) : null}
      <ListView list={list} empty="No sources yet." pager={pager}>
        {(rows) => (
          <Table caption="Webhook sources" columns={['Name', 'Slug', 'State', 'Created']}>
            {rows.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link href={`/webhook-sources/${s.id}`}>{s.name}</Link>
                </td>
                <td>
                  <code>{s.slug}</code>
                </td>
                <td>{s.enabled ? 'enabled' : <strong>disabled</strong>}</td>
                <td>{dateTime(s.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-source" title="New source" submitLabel="Create source" onSubmit={create}>
        <div class="row">
          <Field
            label="Slug"
            required
            pattern={SOURCE_SLUG_PATTERN}
            value={form.slug}
            onInput={(e) => setForm({ ...form, slug: e.currentTarget.value })}
            hint="Last part of the inbound URL."
          />
          <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </div>
        <Checkbox label="Enabled" checked={form.enabled} onChange={(enabled) => setForm({ ...form, enabled })} />
      </FormCard>
    </>
  );
}
