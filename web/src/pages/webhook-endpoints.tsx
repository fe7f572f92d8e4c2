import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { FormCard, ListView, PageTitle, SecretOnce, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useResource, useSubmit } from '../hooks.js';
import { Link } from '../router.js';
import type { NewWebhookEndpoint, WebhookEndpoint } from '../types.js';
import { BLANK_ENDPOINT, describeEventTypes, describeExperiments, EndpointFields, EndpointState, UrlWarnings } from './webhook-endpoint-parts.js';

/** Outbound webhook endpoints: the URLs that receive experiment alerts, and the form to add one. */
export function WebhookEndpoints() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<WebhookEndpoint>>('GET', `/v1/webhook-endpoints${query({ cursor })}`), [cursor]);
  const [draft, setDraft] = useState(BLANK_ENDPOINT);
  const [created, setCreated] = useState<NewWebhookEndpoint | null>(null);
  const submit = useSubmit();
  const create = async () => {
    setCreated(await api<NewWebhookEndpoint>('POST', '/v1/webhook-endpoints', draft));
    setDraft(BLANK_ENDPOINT);
    list.reload();
  };
  return (
    <>
      <PageTitle>Webhook endpoints</PageTitle>
      <p class="muted">
        URLs of yours that receive experiment alerts as they happen: starts and stops, recommendations, guardrail regressions, broken splits. Each delivery is
        signed with the endpoint’s secret in <code>Verdict-Signature</code> and retried for about three days until it is answered with a 2xx.
      </p>
      {created ? (
        <div data-testid="created-endpoint">
          <SecretOnce label={`Signing secret of ${created.url}`} secret={created.secret} onDone={() => setCreated(null)} />
          <UrlWarnings warnings={created.warnings} />
          <p>
            <Link href={`/webhook-endpoints/${created.id}`}>Open the endpoint</Link> to send it a test event.
          </p>
        </div>
      ) : null}
      <ListView list={list} empty="No endpoints yet." pager={pager}>
        {(rows) => (
          <Table caption="Webhook endpoints" columns={['URL', 'Description', 'Format', 'Events', 'Experiments', 'State', 'Created']}>
            {rows.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <Link href={`/webhook-endpoints/${endpoint.id}`}>{endpoint.url}</Link>
                </td>
                <td>{endpoint.description}</td>
                <td>{endpoint.format === 'slack' ? 'Slack' : 'Verdict JSON, signed'}</td>
                <td>{describeEventTypes(endpoint.event_types)}</td>
                <td>{describeExperiments(endpoint)}</td>
                <td>
                  <EndpointState endpoint={endpoint} />
                </td>
                <td>{dateTime(endpoint.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-endpoint" title="New endpoint" submitLabel="Create endpoint" onSubmit={create} submit={submit}>
        <EndpointFields draft={draft} onDraft={setDraft} showEnabled={false} errorAt={submit.errorAt} />
      </FormCard>
    </>
  );
}
