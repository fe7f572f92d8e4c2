import { api, query, type Page } from '../api.js';
import { Field, ListView, PageTitle, Select, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useFormFields, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import { currentSession } from '../session.js';
import type { ApiKey, AuditEntry } from '../types.js';
import { loadNames, TARGET_TYPES, targetHref, targetLabel, type Names } from './audit-names.js';
import { Payload } from './audit-payload.js';

type Filters = Record<'action' | 'target_type' | 'target_id' | 'actor_id' | 'actor_type' | 'since' | 'until', string>;

/** The actor picker's value: one key ("key:<id>"), any key, or the system; the API takes actor_id or actor_type. */
function actorChoice(filters: Pick<Filters, 'actor_id' | 'actor_type'>): string {
  if (filters.actor_id) return `key:${filters.actor_id}`;
  return filters.actor_type ? `type:${filters.actor_type}` : '';
}

function actorFilters(choice: string): Pick<Filters, 'actor_id' | 'actor_type'> {
  if (choice.startsWith('key:')) return { actor_id: choice.slice(4), actor_type: '' };
  if (choice.startsWith('type:')) return { actor_id: '', actor_type: choice.slice(5) };
  return { actor_id: '', actor_type: '' };
}

/** Who can have acted: any key, the system, and each API key of the workspace by name (revoked ones too). */
function ActorSelect({ value, onChange }: { value: string; onChange: (event: { currentTarget: { value: string } }) => void }) {
  const keys = useResource(() => api<Page<ApiKey>>('GET', '/v1/api-keys?limit=200&include_revoked=true'), []);
  const options = [
    { value: '', label: 'Anyone' },
    { value: 'type:api_key', label: 'Any API key (the API and the UI)' },
    { value: 'type:system', label: 'The system (command line, background jobs)' },
    ...(keys.data?.data ?? []).map((key) => ({ value: `key:${key.id}`, label: key.revoked_at ? `${key.name} (revoked)` : key.name })),
  ];
  // A key not (yet) in the list keeps its choice visible rather than showing "Anyone".
  if (value && !options.some((option) => option.value === value)) options.push({ value, label: 'an API key' });
  return <Select label="Actor" value={value} options={options} onChange={onChange} />;
}

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
      <td data-testid="audit-actor">
        {entry.actor_id ? <Link href="/api-keys">{names.actor(entry.actor_id)}</Link> : names.actor(null)}
        <div class="hint">
          <Link
            href={`/audit${query(entry.actor_id ? { actor_id: entry.actor_id } : { actor_type: 'system' })}`}
            aria-label={`What ${names.actor(entry.actor_id)} did`}
          >
            what it did
          </Link>
        </div>
      </td>
      <td>{Object.keys(entry.payload).length ? <Payload payload={entry.payload} /> : <span class="muted">—</span>}</td>
    </tr>
  );
}

async function loadEntries(applied: Filters, cursor: string | undefined): Promise<Page<AuditEntry> & { names: Names }> {
  const page = await api<Page<AuditEntry>>(
    'GET',
    `/v1/audit${query({
      action: applied.action,
      target_type: applied.target_type,
      target_id: applied.target_id,
      actor_id: applied.actor_id,
      actor_type: applied.actor_type,
      since: toIso(applied.since),
      until: toIso(applied.until),
      cursor,
    })}`,
  );
  return { ...page, names: await loadNames(page.data, currentSession.workspaceName) };
}

export function AuditLog({ initial }: { initial: Record<string, string> }) {
  const applied: Filters = { action: '', target_type: '', target_id: '', actor_id: '', actor_type: '', since: '', until: '', ...initial };
  const { form, bind: set } = useFormFields({ ...applied, actor: actorChoice(applied) });
  const { cursor, pager } = usePager([applied]);
  const list = useResource(() => loadEntries(applied, cursor), [JSON.stringify(applied), cursor]);
  const apply = (event: Event) => {
    event.preventDefault();
    const { actor, ...rest } = form;
    navigate(`/audit${query({ ...rest, ...actorFilters(actor) })}`, true);
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
          <ActorSelect value={form.actor} onChange={set('actor')} />
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
