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
      <td>{Object.keys(entry.payload).length ? <Payload payload={entry.payload} action={entry.action} /> : <span class="muted">—</span>}</td>
    </tr>
  );
}

const PEEK = 'experiment.results_peeked';

/** A run of results peeks of one target by one actor, shown as one row. */
interface PeekRun {
  peeks: AuditEntry[];
}

/**
 * Consecutive peeks of the same experiment by the same actor fold into one row ("viewed the
 * results 12 times"): every read through the UI is a peek, and one per row made the log mostly
 * peeks. Filtering by the peek action shows them one by one.
 */
export function foldPeeks(entries: AuditEntry[]): (AuditEntry | PeekRun)[] {
  const rows: (AuditEntry | PeekRun)[] = [];
  for (const entry of entries) {
    const last = rows[rows.length - 1];
    const lastPeek = last && 'peeks' in last ? last.peeks[0] : undefined;
    if (entry.action === PEEK && lastPeek && lastPeek.target_id === entry.target_id && lastPeek.actor_id === entry.actor_id) {
      (last as PeekRun).peeks.push(entry);
    } else {
      rows.push(entry.action === PEEK ? { peeks: [entry] } : entry);
    }
  }
  return rows.map((row) => ('peeks' in row && row.peeks.length === 1 ? (row.peeks[0] as AuditEntry) : row));
}

function PeekRunRow({ run, names }: { run: PeekRun; names: Names }) {
  const newest = run.peeks[0] as AuditEntry;
  const oldest = run.peeks[run.peeks.length - 1] as AuditEntry;
  const target = names.target(newest);
  return (
    <tr data-testid="peek-run">
      <td>
        {dateTime(oldest.created_at)} – {dateTime(newest.created_at)}
      </td>
      <td>results viewed {run.peeks.length} times</td>
      <td data-testid="audit-target">
        <span class="muted">experiment</span> <Link href={`/experiments/${newest.target_id}`}>{target}</Link>
      </td>
      <td data-testid="audit-actor">{names.actor(newest.actor_id)}</td>
      <td>
        <Link href={`/audit${query({ action: PEEK, target_id: newest.target_id })}`}>Each view</Link>
      </td>
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
      <p class="muted">Every change and every results peek, newest first; views of the same results in a row are folded into one line. Filters combine.</p>
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
            {(applied.action ? rows : foldPeeks(rows)).map((row) =>
              'peeks' in row ? (
                <PeekRunRow key={(row.peeks[0] as AuditEntry).id} run={row} names={(list.data as { names: Names }).names} />
              ) : (
                <AuditRow key={row.id} entry={row} names={(list.data as { names: Names }).names} />
              ),
            )}
          </Table>
        )}
      </ListView>
    </>
  );
}
