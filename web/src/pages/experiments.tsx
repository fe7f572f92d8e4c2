import { api, query, type Page } from '../api.js';
import { ListView, PageTitle, Select, StatusBadge, Table, usePager } from '../components/ui.js';
import { chance, integer, lift, percent } from '../format.js';
import { useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Experiment } from '../types.js';
import { runningDays } from './experiment.js';
import { plannedSample } from './experiment-parts.js';
import { latestStanding, type Standing } from './experiments-standing.js';
import { recommendationWords } from './results-header.js';

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

/** The page of experiments, each with how it stands (from its latest snapshot; not a peek). */
async function loadRows(status: string, cursor: string | undefined): Promise<Page<Row>> {
  const page = await api<Page<Experiment>>('GET', `/v1/experiments${query({ status, cursor, limit: 50 })}`);
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

export function Experiments({ status }: { status: string }) {
  const { cursor, pager } = usePager([status]);
  const list = useResource(() => loadRows(status, cursor), [status, cursor]);

  return (
    <>
      <PageTitle
        actions={
          <Link class="button primary" href="/experiments/new">
            New experiment
          </Link>
        }
      >
        Experiments
      </PageTitle>
      <div class="filters">
        <Select label="Status" value={status} options={statuses} onChange={(e) => navigate(`/experiments${query({ status: e.currentTarget.value })}`, true)} />
      </div>
      <ListView list={list} empty={status ? `No ${status} experiments.` : 'No experiments yet. Create one to start.'} pager={pager}>
        {(rows) => (
          <Table caption="Experiments" columns={['Name', 'Status', 'Recommendation', 'Primary lift', 'Split', 'Units per variant (of the minimum)', 'Running']}>
            {rows.map((row) => (
              <tr key={row.experiment.id} data-testid={`experiment-row-${row.experiment.key}`}>
                <td>
                  <Link href={`/experiments/${row.experiment.id}`}>{row.experiment.name}</Link>
                  {row.experiment.started_at ? (
                    <div class="hint">
                      <Link href={`/experiments/${row.experiment.id}/results`} aria-label={`Results of ${row.experiment.name}`}>
                        Results
                      </Link>
                    </div>
                  ) : null}
                </td>
                <td>
                  <StatusBadge status={row.experiment.status} />
                  {row.experiment.stop_reason ? <div class="hint">{stopReasons[row.experiment.stop_reason] ?? row.experiment.stop_reason}</div> : null}
                  {row.experiment.launched_variant_key && row.experiment.status === 'stopped' ? (
                    <div class="hint" data-testid="list-launched">
                      launched: {row.experiment.launched_variant_key}
                    </div>
                  ) : null}
                </td>
                <StandingCells row={row} />
                <td>{runningDays(row.experiment)}</td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
    </>
  );
}
