import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { Checkbox, ErrorBox, Field, ListView, PageTitle, SecretOnce, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { WebhookSource } from '../types.js';

export function inboundUrl(source: WebhookSource, workspaceId?: string): string {
  const path = source.inbound_path ?? `/webhooks/inbound/${workspaceId ?? '{workspace_id}'}/${source.slug}`;
  return `${location.origin}${path}`;
}

export function WebhookSources() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<WebhookSource>>('GET', `/v1/webhook-sources${query({ cursor })}`), [cursor]);
  const [form, setForm] = useState({ slug: '', name: '', enabled: true });
  const [created, setCreated] = useState<WebhookSource | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      setCreated(await api<WebhookSource>('POST', '/v1/webhook-sources', form));
      setForm({ slug: '', name: '', enabled: true });
      list.reload();
    });
  };
  return (
    <>
      <PageTitle>Webhook sources</PageTitle>
      <p class="muted">
        Senders of signed inbound webhooks. Each posts events to its own URL, signed with its secret in <code>X-Service-Signature</code>.
      </p>
      {created?.inbound_secret ? (
        <SecretOnce label={`Inbound secret of "${created.name}" (posts to ${inboundUrl(created)})`} secret={created.inbound_secret} onDone={() => setCreated(null)} />
      ) : null}
      <ListView list={list} empty="No sources yet." pager={pager}>
        {(rows) => (
          <Table caption="Webhook sources">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </Table>
        )}
      </ListView>
      <form class="card" onSubmit={submit} aria-labelledby="new-source">
        <h2 id="new-source">New source</h2>
        <div class="row">
          <Field label="Slug" required pattern="[a-z0-9-]{1,64}" value={form.slug} onInput={(e) => setForm({ ...form, slug: e.currentTarget.value })} hint="Last part of the inbound URL." />
          <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </div>
        <Checkbox label="Enabled" checked={form.enabled} onChange={(enabled) => setForm({ ...form, enabled })} />
        <ErrorBox error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create source
        </button>
      </form>
    </>
  );
}
