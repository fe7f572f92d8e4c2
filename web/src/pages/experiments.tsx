import { api, query, type Page } from '../api.js';
import { Field, ListView, PageTitle, Select, StatusBadge, Table, usePager } from '../components/ui.js';
import { chance, integer, lift, percent } from '../format.js';
import { useResource } from '../hooks.js';
import { Link, navigate, useLocation } from '../router.js';
import type { Experiment } from '../types.js';
import { runningDays } from './experiment.js';
import { plannedSample } from './experiment-parts.js';
import { latestStanding, type Standing } from './experiments-standing.js';
import { recommendationWords } from './results-header.js';
import { ActiveFilters, OwnerCell, TagChips, tagsOf } from './experiments-labels.js';

const statuses = [
  { value: '', label: 'All statuses' },
  { value: 'draft', label: 'Draft' },
  { value: 'running', label: 'Running' },
  { value: 'stopped', label: 'Stopped' },
  { value: 'archived', label: 'Archived' },
];

const stopReasons: Record<string, string> = { won: 'won', lost: 'lost', inconclusive: 'inconclusive', bug: 'bug', business: 'business reason' };

interface Row {
  experiment: Experiment;
  standing: Standing | null;
}

const orders = [
  { value: '', label: 'Oldest first' },
  { value: 'newest', label: 'Newest first' },
  { value: 'updated', label: 'Recently changed' },
  { value: 'name', label: 'Name (A–Z)' },
];

interface ListFilter {
  status: string;
  q: string;
  order: string;
  /** Tags, comma-separated: experiments with every one. */
  tag: string;
  owner: string;
}

/** The page of experiments, each with how it stands (from its latest snapshot; not a peek). */
async function loadRows(filter: ListFilter, cursor: string | undefined): Promise<Page<Row>> {
  const page = await api<Page<Experiment>>('GET', `/v1/experiments${query({ ...filter, cursor, limit: 50 })}`);
  const standings = await Promise.all(page.data.map((experiment) => latestStanding(experiment).catch(() => null)));
  return { data: page.data.map((experiment, i) => ({ experiment, standing: standings[i] ?? null })), next_cursor: page.next_cursor };
}

function StandingCells({ row }: { row: Row }) {
  const { experiment: e, standing: s } = row;
  if (!s) {
    return (
      <>
        <td class="muted">{e.started_at ? 'no snapshot yet' : '—'}</td>
        <td>—</td>
        <td>—</td>
        <td>—</td>
      </>
    );
  }
  const needed = plannedSample(e);
  const share = needed > 0 ? Math.min(1, s.smallestSample / needed) : 1;
  return (
    <>
      <td>
        <span class={`badge rec rec-${s.recommendation}`} data-testid="list-recommendation">
          {recommendationWords(s.recommendation, s.variantKey, { stopped: e.status === 'stopped' || e.status === 'archived', controlKey: s.controlKey })}
        </span>
      </td>
      <td data-testid="list-lift">
        {s.lift ? (
          <>
            {s.lift.variant}: <strong>{lift(s.lift.mean)}</strong>
            <div class="hint">
              {lift(s.lift.low)} to {lift(s.lift.high)} · {chance(s.lift.chance)} to beat control
            </div>
          </>
        ) : (
          '—'
        )}
      </td>
      <td>
        {s.srm ? (
          <span class="badge badge-srm" data-testid="list-srm">
            SRM
          </span>
        ) : (
          <span class="muted">ok</span>
        )}
      </td>
      <td data-testid="list-progress">
        {integer(s.smallestSample)} / {integer(needed)}
        <progress max={1} value={share} aria-label={`Progress of ${e.name} to the minimum sample`} /> {percent(share, 0)}
      </td>
    </>
  );
}

const goTo = (filter: ListFilter, next: Partial<ListFilter>) => navigate(`/experiments${query({ ...filter, ...next })}`, true);

/** Search, status, owner, tags and order, kept in the address so a filtered list can be shared and reloaded. */
function ListFilters({ filter }: { filter: ListFilter }) {
  const go = (next: Partial<ListFilter>) => goTo(filter, next);
  const search = (event: Event) => {
    event.preventDefault();
    const form = (event.currentTarget as HTMLFormElement).elements;
    const text = (name: string) => (form.namedItem(name) as HTMLInputElement).value.trim();
    go({ q: text('q'), owner: text('owner') });
  };
  const tags = tagsOf(filter.tag);
  return (
    <form class="filters" role="search" aria-label="Find experiments" onSubmit={search}>
      <Field key={filter.q} label="Search" name="q" type="search" defaultValue={filter.q} placeholder="Name or key" />
      <Field key={`owner-${filter.owner}`} label="Owner" name="owner" type="search" defaultValue={filter.owner} placeholder="Name" />
      <button type="submit">Search</button>
      <Select label="Status" value={filter.status} options={statuses} onChange={(e) => go({ status: e.currentTarget.value })} />
      <Select label="Order" value={filter.order} options={orders} onChange={(e) => go({ order: e.currentTarget.value })} />
      <ActiveFilters
        tags={tags}
        owner={filter.owner}
        onRemoveTag={(tag) => go({ tag: tags.filter((t) => t !== tag).join(',') })}
        onRemoveOwner={() => go({ owner: '' })}
      />
    </form>
  );
}

/** The list's filters as the address gives them. */
function filterOf(status: string, search: URLSearchParams): ListFilter {
  const text = (name: string) => search.get(name) ?? '';
  return { status, q: text('q'), order: text('order'), tag: tagsOf(text('tag')).join(','), owner: text('owner') };
}

function emptyText(filter: ListFilter): string {
  if (filter.q) return `No experiments match “${filter.q}”.`;
  if (filter.tag || filter.owner) return 'No experiments match these filters.';
  return filter.status ? `No ${filter.status} experiments.` : 'No experiments yet. Create one to start.';
}

/** One experiment: its name, tags and owner (each narrows the list), status and how it stands. */
function ExperimentRow({ row, filter }: { row: Row; filter: ListFilter }) {
  const e = row.experiment;
  const activeTags = tagsOf(filter.tag);
  return (
    <tr data-testid={`experiment-row-${e.key}`}>
      <td>
        <Link href={`/experiments/${e.id}`}>{e.name}</Link>
        {e.started_at ? (
          <div class="hint">
            <Link href={`/experiments/${e.id}/results`} aria-label={`Results of ${e.name}`}>
              Results
            </Link>
          </div>
        ) : null}
        <TagChips experiment={e} active={activeTags} onTag={(tag) => goTo(filter, { tag: [...new Set([...activeTags, tag])].join(',') })} />
      </td>
      <OwnerCell experiment={e} onOwner={(owner) => goTo(filter, { owner })} />
      <td>
        <StatusBadge status={e.status} />
        {e.stop_reason ? <div class="hint">{stopReasons[e.stop_reason] ?? e.stop_reason}</div> : null}
        {e.launched_variant_key && e.status === 'stopped' ? (
          <div class="hint" data-testid="list-launched">
            launched: {e.launched_variant_key}
          </div>
        ) : null}
      </td>
      <StandingCells row={row} />
      <td>{runningDays(e)}</td>
    </tr>
  );
}

export function Experiments({ status }: { status: string }) {
  const where = useLocation();
  const filter = filterOf(status, where.search);
  const { cursor, pager } = usePager([filter]);
  const list = useResource(() => loadRows(filter, cursor), [JSON.stringify(filter), cursor]);

  return (
    <>
      <PageTitle
        actions={
          <>
            <Link class="button" href="/experiment-templates">
              Templates
            </Link>
            <Link class="button primary" href="/experiments/new">
              New experiment
            </Link>
          </>
        }
      >
        Experiments
      </PageTitle>
      <ListFilters filter={filter} />
      <ListView list={list} empty={emptyText(filter)} pager={pager}>
        {(rows) => (
          <Table
            caption="Experiments"
            columns={['Name', 'Owner', 'Status', 'Recommendation', 'Primary lift', 'Split', 'Units per variant (of the minimum)', 'Running']}
          >
            {rows.map((row) => (
              <ExperimentRow key={row.experiment.id} row={row} filter={filter} />
            ))}
          </Table>
        )}
      </ListView>
    </>
  );
}
