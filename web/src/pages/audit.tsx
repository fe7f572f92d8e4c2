import { api, query, type Page } from '../api.js';
import { Field, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { dateTime, json } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { navigate } from '../router.js';
import type { AuditEntry } from '../types.js';

type Filters = Record<'action' | 'target_type' | 'target_id' | 'since' | 'until', string>;

/** datetime-local has no zone: read it as local time and send UTC, as the API expects. */
function toIso(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function AuditRow({ entry }: { entry: AuditEntry }) {
  return (
    <tr>
      <td>{dateTime(entry.created_at)}</td>
      <td>
        <code>{entry.action}</code>
      </td>
      <td>
        {entry.target_type} <code class="id">{entry.target_id}</code>
      </td>
      <td>
        <code class="id">{entry.actor_id ?? 'CLI'}</code>
      </td>
      <td>
        {Object.keys(entry.payload).length ? (
          <details>
            <summary>Payload</summary>
            <pre class="code">{json(entry.payload)}</pre>
          </details>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
    </tr>
  );
}

export function AuditLog({ initial }: { initial: Record<string, string> }) {
  const applied: Filters = { action: '', target_type: '', target_id: '', since: '', until: '', ...initial };
  const { form, bind: set } = useFormFields(applied);
  const { cursor, pager } = usePager([applied]);
  const list = useResource(
    () =>
      api<Page<AuditEntry>>(
        'GET',
        `/v1/audit${query({ action: applied.action, target_type: applied.target_type, target_id: applied.target_id, since: toIso(applied.since), until: toIso(applied.until), cursor })}`,
      ),
    [JSON.stringify(applied), cursor],
  );
  const apply = (event: Event) => {
    event.preventDefault();
    navigate(`/audit${query(form)}`, true);
  };

  return (
    <>
      <PageTitle>Audit log</PageTitle>
      <p class="muted">Every change and every results peek, newest first. Filters combine.</p>
      <form class="filters card" onSubmit={apply} aria-label="Filter the audit log">
        <div class="row">
          <Field label="Action" value={form.action} onInput={set('action')} hint="e.g. experiment.results_peeked" />
          <Field label="Target type" value={form.target_type} onInput={set('target_type')} hint="e.g. experiment" />
          <Field label="Target id" value={form.target_id} onInput={set('target_id')} />
          <Field label="Since" type="datetime-local" value={form.since} onInput={set('since')} />
          <Field label="Until" type="datetime-local" value={form.until} onInput={set('until')} />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button type="button" onClick={() => navigate('/audit', true)}>
            Clear
          </button>
        </div>
      </form>
      <ListView list={list} empty="No entries match." pager={pager}>
        {(rows) => (
          <Table caption="Audit entries" columns={['When', 'Action', 'Target', 'Actor key', 'Details']}>
            {rows.map((entry) => (
              <AuditRow key={entry.id} entry={entry} />
            ))}
          </Table>
        )}
      </ListView>
    </>
  );
}
