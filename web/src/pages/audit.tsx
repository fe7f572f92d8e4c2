import { api, query, type Page } from '../api.js';
import { Field, ListView, PageTitle, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import { currentSession } from '../session.js';
import type { AuditEntry } from '../types.js';
import { loadNames, TARGET_TYPES, targetHref, targetLabel, type Names } from './audit-names.js';
import { Payload } from './audit-payload.js';

type Filters = Record<'action' | 'target_type' | 'target_id' | 'since' | 'until', string>;

/** datetime-local has no zone: read it as local time and send UTC, as the API expects. */
function toIso(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** "experiment.results_peeked" as "experiment results peeked". */
function actionWords(action: string): string {
  return action.replace(/[._]/g, ' ');
}

function AuditRow({ entry, names }: { entry: AuditEntry; names: Names }) {
  const href = targetHref(entry.target_type, entry.target_id);
  const target = names.target(entry);
  return (
    <tr>
      <td>{dateTime(entry.created_at)}</td>
      <td>
        <span title={entry.action}>{actionWords(entry.action)}</span>
      </td>
      <td data-testid="audit-target">
        <span class="muted">{targetLabel(entry.target_type)}</span> {href ? <Link href={href}>{target}</Link> : target}
        <div class="hint">
          <Link href={`/audit${query({ target_id: entry.target_id })}`} aria-label={`History of ${target}`}>
            its history
          </Link>
        </div>
      </td>
      <td data-testid="audit-actor">{entry.actor_id ? <Link href="/api-keys">{names.actor(entry.actor_id)}</Link> : names.actor(null)}</td>
      <td>{Object.keys(entry.payload).length ? <Payload payload={entry.payload} /> : <span class="muted">—</span>}</td>
    </tr>
  );
}

async function loadEntries(applied: Filters, cursor: string | undefined): Promise<Page<AuditEntry> & { names: Names }> {
  const page = await api<Page<AuditEntry>>(
    'GET',
    `/v1/audit${query({ action: applied.action, target_type: applied.target_type, target_id: applied.target_id, since: toIso(applied.since), until: toIso(applied.until), cursor })}`,
  );
  return { ...page, names: await loadNames(page.data, currentSession.workspaceName) };
}

export function AuditLog({ initial }: { initial: Record<string, string> }) {
  const applied: Filters = { action: '', target_type: '', target_id: '', since: '', until: '', ...initial };
  const { form, bind: set } = useFormFields(applied);
  const { cursor, pager } = usePager([applied]);
  const list = useResource(() => loadEntries(applied, cursor), [JSON.stringify(applied), cursor]);
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
          <Select
            label="Target type"
            value={form.target_type}
            options={[{ value: '', label: 'Any' }, ...TARGET_TYPES.map((type) => ({ value: type, label: targetLabel(type) }))]}
            onChange={set('target_type')}
          />
          <Field label="Target id" value={form.target_id} onInput={set('target_id')} hint="Set by “its history” on an entry" />
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
          <Table caption="Audit entries" columns={['When', 'Action', 'Target', 'Actor', 'Details']}>
            {rows.map((entry) => (
              <AuditRow key={entry.id} entry={entry} names={(list.data as { names: Names }).names} />
            ))}
          </Table>
        )}
      </ListView>
    </>
  );
}
