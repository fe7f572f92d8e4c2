import { api, query, type Page } from '../api.js';
import { ListView, PageTitle, Select, StatusBadge, Table, usePager } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Experiment } from '../types.js';

const statuses = [
  { value: '', label: 'All statuses' },
  { value: 'draft', label: 'Draft' },
  { value: 'running', label: 'Running' },
  { value: 'stopped', label: 'Stopped' },
  { value: 'archived', label: 'Archived' },
];

export function Experiments({ status }: { status: string }) {
  const { cursor, pager } = usePager([status]);
  const list = useResource(() => api<Page<Experiment>>('GET', `/v1/experiments${query({ status, cursor, limit: 50 })}`), [status, cursor]);

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
          <Table caption="Experiments" columns={['Name', 'Key', 'Status', 'Variants', 'Started', 'Results']}>
            {rows.map((experiment) => (
              <tr key={experiment.id}>
                <td>
                  <Link href={`/experiments/${experiment.id}`}>{experiment.name}</Link>
                </td>
                <td>
                  <code>{experiment.key}</code>
                </td>
                <td>
                  <StatusBadge status={experiment.status} />
                </td>
                <td>{experiment.variants.map((v) => `${v.key} ${v.weight}%`).join(', ')}</td>
                <td>{dateTime(experiment.started_at)}</td>
                <td>
                  {experiment.started_at ? (
                    <Link href={`/experiments/${experiment.id}/results`} aria-label={`Results of ${experiment.name}`}>
                      Results
                    </Link>
                  ) : (
                    <span class="muted">not started</span>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
    </>
  );
}
