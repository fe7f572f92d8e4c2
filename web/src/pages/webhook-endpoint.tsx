import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Facts, FormCard, ListView, Loading, PageTitle, SecretOnce, Select, Table, usePager } from '../components/ui.js';
import { dateTime, integer } from '../format.js';
import { useAction, useResource, useSubmit } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { EndpointDelivery, NewWebhookEndpoint, WebhookEndpoint } from '../types.js';
import { describeEventTypes, describeExperiments, draftOf, EndpointFields, EndpointState, eventName, patchOf, UrlWarnings } from './webhook-endpoint-parts.js';

const statuses = ['', 'pending', 'succeeded', 'failed'].map((value) => ({ value, label: value || 'All statuses' }));

/** Why a delivery cannot be sent again now, or null when it can (the server answers 409 otherwise). */
function whyNotRedeliver(delivery: EndpointDelivery, endpoint: WebhookEndpoint): string | null {
  if (!endpoint.enabled) return 'Enable the endpoint to send to it again.';
  if (delivery.status === 'pending') return 'An attempt is already scheduled.';
  return null;
}

/** The columns of a delivery row; the response body, when shown, spans them all in a row of its own. */
const DELIVERY_COLUMNS = [
  'Created',
  'Event',
  'Experiment',
  'Status',
  'Attempts',
  'Response',
  'Last error',
  'Took',
  'Next attempt',
  { hidden: 'Action' },
] as const;

function DeliveryRow({
  delivery: d,
  endpoint,
  busy,
  onRedeliver,
}: {
  delivery: EndpointDelivery;
  endpoint: WebhookEndpoint;
  busy: boolean;
  onRedeliver: () => void;
}) {
  const [showBody, setShowBody] = useState(false);
  const blocked = whyNotRedeliver(d, endpoint);
  return (
    <>
      <tr data-testid="delivery-row" data-status={d.status}>
        <td class="nowrap">{dateTime(d.created_at)}</td>
        <td>
          <span title={d.event_type}>{eventName(d.event_type)}</span>
        </td>
        <td>{d.experiment ? <Link href={`/experiments/${d.experiment.id}`}>{d.experiment.name}</Link> : <span class="muted">—</span>}</td>
        <td>
          <span class={`badge badge-delivery-${d.status}`}>{d.status}</span>
        </td>
        <td>{integer(d.attempts)}</td>
        <td class="nowrap">
          {d.response_status ?? '—'}{' '}
          {d.response_body ? (
            <button type="button" class="link-button" aria-expanded={showBody} onClick={() => setShowBody(!showBody)}>
              {showBody ? 'Hide body' : 'Body'}
            </button>
          ) : null}
        </td>
        <td class="delivery-error">{d.last_error ?? ''}</td>
        <td class="nowrap">{d.duration_ms === null ? '—' : `${integer(d.duration_ms)} ms`}</td>
        <td class="nowrap">{d.next_attempt_at ? dateTime(d.next_attempt_at) : '—'}</td>
        <td>
          <button type="button" disabled={busy || blocked !== null} title={blocked ?? 'Send the same event again now'} onClick={onRedeliver}>
            Redeliver
          </button>
        </td>
      </tr>
      {showBody && d.response_body ? (
        <tr class="delivery-body" data-testid="delivery-body">
          <td colSpan={DELIVERY_COLUMNS.length}>
            <pre class="code">{d.response_body}</pre>
            <small class="muted">The first 1 KB of the response, at most.</small>
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The delivery log, newest first; `generation` changes when the page sent something new. */
function Deliveries({ endpoint, generation }: { endpoint: WebhookEndpoint; generation: number }) {
  const [status, setStatus] = useState('');
  const { cursor, pager } = usePager([status]);
  const list = useResource(
    () => api<Page<EndpointDelivery>>('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries${query({ status, cursor })}`),
    [endpoint.id, status, cursor, generation],
  );
  const action = useAction();
  const redeliver = (delivery: EndpointDelivery) =>
    void action.run(async () => {
      await api('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/redeliver`);
      list.reload();
    });
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="filters">
        <Select label="Status" value={status} options={statuses} onChange={(e) => setStatus(e.currentTarget.value)} />
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={action.error} />
      <ListView list={list} empty={<>No deliveries{status ? ` with status ${status}` : ''} yet. Send a test event to see one.</>} pager={pager}>
        {(rows) => (
          <Table caption="Deliveries" columns={DELIVERY_COLUMNS}>
            {rows.map((delivery) => (
              <DeliveryRow key={delivery.id} delivery={delivery} endpoint={endpoint} busy={action.busy} onRedeliver={() => redeliver(delivery)} />
            ))}
          </Table>
        )}
      </ListView>
    </section>
  );
}

function EditEndpoint({ endpoint, onSaved }: { endpoint: WebhookEndpoint; onSaved: (warnings: string[]) => void }) {
  const initial = draftOf(endpoint);
  const [draft, setDraft] = useState(initial);
  const submit = useSubmit();
  const save = async () => {
    const saved = await api<WebhookEndpoint & { warnings: string[] }>('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, patchOf(draft));
    onSaved(saved.warnings);
  };
  return (
    <FormCard
      id="edit-endpoint"
      title="Edit endpoint"
      submitLabel="Save endpoint"
      primary={false}
      ready={JSON.stringify(draft) !== JSON.stringify(initial)}
      onSubmit={save}
      submit={submit}
    >
      <EndpointFields draft={draft} onDraft={setDraft} showEnabled maskedUrl={endpoint.url} errorAt={submit.errorAt} />
    </FormCard>
  );
}

/** Test ping, rotation (the new secret shown once) and deletion, each asking first when it cannot be undone. */
function useEndpointActions(id: string, url: string, after: { reload: () => void; pinged: () => void; rotated: (secret: string) => void }) {
  const action = useAction();
  const ping = () =>
    void action.run(async () => {
      await api('POST', `/v1/webhook-endpoints/${id}/test`);
      after.pinged();
    });
  const rotate = () => {
    if (!confirm('Rotate the signing secret? For 24 hours deliveries carry signatures with both the old and the new secret, then only the new one.')) return;
    void action.run(async () => {
      after.rotated((await api<NewWebhookEndpoint>('POST', `/v1/webhook-endpoints/${id}/rotate-secret`)).secret);
      after.reload();
    });
  };
  const remove = () => {
    if (!confirm(`Delete the endpoint ${url}? Its delivery log goes with it, and attempts not yet made are not made.`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/webhook-endpoints/${id}`);
      navigate('/webhook-endpoints');
    });
  };
  return { action, ping, rotate, remove };
}

/** What the endpoint is: URL (masked), format, what it is sent, its state. */
function EndpointFacts({ endpoint: e }: { endpoint: WebhookEndpoint }) {
  return (
    <Facts
      items={[
        ['URL (masked)', <code>{e.url}</code>],
        ['Format', e.format === 'slack' ? 'Slack incoming webhook: unsigned, the URL is the secret' : 'Verdict JSON, signed'],
        ['Events', describeEventTypes(e.event_types)],
        ['Experiments', describeExperiments(e)],
        ['State', <EndpointState endpoint={e} />],
        ...(e.format === 'slack'
          ? []
          : [
              ['Previous secret signs until', e.previous_secret_expires_at ? dateTime(e.previous_secret_expires_at) : 'no previous secret'] as [string, string],
            ]),
        ['Created', dateTime(e.created_at)],
      ]}
    />
  );
}

export function WebhookEndpointDetail({ id }: { id: string }) {
  const endpoint = useResource(() => api<WebhookEndpoint>('GET', `/v1/webhook-endpoints/${id}`), [id]);
  const [secret, setSecret] = useState<string | null>(null);
  const [warnings, setWarnings] = useState<string[]>([]);
  const [generation, setGeneration] = useState(0);
  const { action, ping, rotate, remove } = useEndpointActions(id, endpoint.data?.url ?? '', {
    reload: endpoint.reload,
    pinged: () => setGeneration((g) => g + 1),
    rotated: setSecret,
  });
  if (endpoint.error) return <ErrorBox error={endpoint.error} />;
  if (!endpoint.data) return <Loading />;
  const e = endpoint.data;
  return (
    <>
      <PageTitle
        actions={
          <>
            <button type="button" class="primary" disabled={action.busy || !e.enabled} onClick={ping}>
              Send test event
            </button>
            {e.format === 'slack' ? null : (
              <button type="button" disabled={action.busy} onClick={rotate}>
                Rotate secret
              </button>
            )}
            <button type="button" class="danger" disabled={action.busy} onClick={remove}>
              Delete
            </button>
          </>
        }
      >
        {e.description || e.url}
      </PageTitle>
      {secret ? <SecretOnce label="New signing secret" secret={secret} onDone={() => setSecret(null)} /> : null}
      <UrlWarnings warnings={warnings} />
      <ErrorBox error={action.error} />
      <EndpointFacts endpoint={e} />
      <EditEndpoint
        key={e.updated_at}
        endpoint={e}
        onSaved={(found) => {
          setWarnings(found);
          endpoint.reload();
        }}
      />
      <Deliveries key={e.updated_at} endpoint={e} generation={generation} />
    </>
  );
}
