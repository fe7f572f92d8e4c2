import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Facts, ListView, Loading, PageTitle, SecretOnce, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import type { Delivery, NewWebhookSource, WebhookSource } from '../types.js';
import { inboundUrl } from './webhook-sources.js';

const outcomes = ['', 'accepted', 'replayed', 'unauthorized', 'disabled', 'invalid', 'idempotency_conflict', 'failed'].map((value) => ({
  value,
  label: value || 'All outcomes',
}));

function Deliveries({ sourceId }: { sourceId: string }) {
  const [outcome, setOutcome] = useState('');
  const { cursor, pager } = usePager([outcome]);
  const list = useResource(() => api<Page<Delivery>>('GET', `/v1/webhook-sources/${sourceId}/deliveries${query({ outcome, cursor })}`), [outcome, cursor]);
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="filters">
        <Select label="Outcome" value={outcome} options={outcomes} onChange={(e) => setOutcome(e.currentTarget.value)} />
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ListView list={list} empty={<>No deliveries{outcome ? ` with outcome ${outcome}` : ''} (kept 30 days).</>} pager={pager}>
        {(rows) => (
          <Table caption="Deliveries" columns={['Received', 'Outcome', 'Status', 'Events', 'Idempotency key', 'Reason']}>
            {rows.map((d) => (
              <tr key={d.id}>
                <td>{dateTime(d.received_at)}</td>
                <td>{d.outcome}</td>
                <td>{d.status_code}</td>
                <td>
                  {d.accepted_count}/{d.event_count} accepted{d.rejected_count ? `, ${d.rejected_count} rejected` : ''}
                </td>
                <td>{d.idempotency_key ? <code class="id">{d.idempotency_key}</code> : '—'}</td>
                <td>{d.reason ?? ''}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
    </section>
  );
}

export function WebhookSourceDetail({ id }: { id: string }) {
  const source = useResource(() => api<WebhookSource>('GET', `/v1/webhook-sources/${id}`), [id]);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  if (source.error) return <ErrorBox error={source.error} />;
  if (!source.data) return <Loading />;
  const s = source.data;
  const toggle = () =>
    action.run(async () => {
      await api('PATCH', `/v1/webhook-sources/${id}`, { enabled: !s.enabled });
      source.reload();
    });
  const rotate = () => {
    if (!confirm('Rotate the inbound secret? The old one keeps verifying for 24 hours, then only the new one does.')) return;
    void action.run(async () => {
      const rotated = await api<NewWebhookSource>('POST', `/v1/webhook-sources/${id}/rotate-secret`);
      setSecret(rotated.inbound_secret ?? null);
      source.reload();
    });
  };
  return (
    <>
      <PageTitle>{s.name}</PageTitle>
      {secret ? <SecretOnce label="New inbound secret" secret={secret} onDone={() => setSecret(null)} /> : null}
      <Facts
        items={[
          ['Slug', <code>{s.slug}</code>],
          ['Inbound URL', <code>{inboundUrl(s)}</code>],
          ['State', s.enabled ? 'enabled' : 'disabled — inbound posts answer 409'],
          ['Previous secret valid until', dateTime(s.previous_secret_expires_at)],
          ['Created', dateTime(s.created_at)],
        ]}
      />
      <div class="actions">
        <button type="button" disabled={action.busy} onClick={() => void toggle()}>
          {s.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" disabled={action.busy} onClick={rotate}>
          Rotate secret
        </button>
      </div>
      <ErrorBox error={action.error} />
      <Deliveries sourceId={id} />
    </>
  );
}
