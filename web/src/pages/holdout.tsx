// One holdout: what it holds out, its lifecycle, and the experiments it covers with their launches
// in date order (the timeline of what shipped while it ran).
import { api } from '../api.js';
import { ErrorBox, Facts, Field, FormCard, Loading, PageTitle, StatusBadge, Table } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useFormFields, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Holdout, HoldoutExperiments } from '../types.js';
import { HoldoutResults } from './holdout-results.js';
import { describeCoverage } from './holdouts.js';

type Covered = HoldoutExperiments['covered'][number];

/** Starts, launches and stops of the covered experiments, oldest first. */
function timeline(covered: Covered[]): { at: string; what: string; experiment: Covered }[] {
  const moments = covered.flatMap((e) => [
    ...(e.started_at ? [{ at: e.started_at, what: 'started', experiment: e }] : []),
    ...(e.stopped_at ? [{ at: e.stopped_at, what: 'stopped', experiment: e }] : []),
    ...(e.launched_at ? [{ at: e.launched_at, what: `launched ${e.launched_variant_key ?? ''}`, experiment: e }] : []),
  ]);
  return moments.sort((a, b) => a.at.localeCompare(b.at));
}

function LifecycleActions({ holdout: h, onChanged }: { holdout: Holdout; onChanged: () => void }) {
  const action = useAction();
  const move = (path: string, question?: string) => {
    if (question && !confirm(question)) return;
    void action.run(async () => {
      await api('POST', `/v1/holdouts/${h.id}/${path}`);
      onChanged();
    });
  };
  return (
    <>
      {h.status === 'draft' ? (
        <button type="button" class="primary" disabled={action.busy} onClick={() => move('start')}>
          Start holdout
        </button>
      ) : null}
      {h.status === 'running' ? (
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() => move('end', `End "${h.name}"? Its units are assigned like everyone else from then on.`)}
        >
          End holdout
        </button>
      ) : null}
      {h.status !== 'archived' ? (
        <button type="button" disabled={action.busy} onClick={() => move('archive', `Archive "${h.name}"?`)}>
          Archive
        </button>
      ) : null}
      {action.error ? <ErrorBox error={action.error} /> : null}
    </>
  );
}

function GrowForm({ holdout: h, onChanged }: { holdout: Holdout; onChanged: () => void }) {
  const { form, bind } = useFormFields({ percent: String(h.percent) });
  const grow = async () => {
    await api('PATCH', `/v1/holdouts/${h.id}`, { percent: Number(form.percent) });
    onChanged();
  };
  const running = h.status === 'running';
  return (
    <FormCard id="holdout-percent" title={running ? 'Grow the holdout' : 'Percent held out'} submitLabel="Save percent" onSubmit={grow} primary={false}>
      <Field
        label="Percent held out"
        type="number"
        min={running ? h.percent : 0.5}
        max={20}
        step={0.01}
        value={form.percent}
        onInput={bind('percent')}
        hint={running ? 'A running holdout can only grow: every unit held out now stays held out.' : '0.5 to 20'}
      />
    </FormCard>
  );
}

function CoveredExperiments({ data }: { data: HoldoutExperiments }) {
  const moments = timeline(data.covered);
  return (
    <section class="card" aria-labelledby="covered-title" data-testid="holdout-experiments">
      <h2 id="covered-title">Covered experiments and launches</h2>
      {moments.length === 0 ? <p class="muted">No covered experiment has started yet.</p> : null}
      {moments.length > 0 ? (
        <Table caption="Timeline of covered experiments" columns={['When', 'Experiment', 'What']}>
          {moments.map((m) => (
            <tr key={`${m.experiment.id}-${m.what}`}>
              <td>{dateTime(m.at)}</td>
              <td>
                <Link href={`/experiments/${m.experiment.id}`}>{m.experiment.name}</Link>
              </td>
              <td>{m.what}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      {data.opted_out.length > 0 ? (
        <>
          <h3>Opted out</h3>
          <ul>
            {data.opted_out.map((e) => (
              <li key={e.id}>
                <Link href={`/experiments/${e.id}`}>{e.name}</Link>: {e.reason}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

export function HoldoutDetail({ id }: { id: string }) {
  const holdout = useResource(() => api<Holdout>('GET', `/v1/holdouts/${id}`), [id]);
  const experiments = useResource(() => api<HoldoutExperiments>('GET', `/v1/holdouts/${id}/experiments`), [id]);
  const h = holdout.data;
  if (holdout.error) return <ErrorBox error={holdout.error} />;
  if (!h) return <Loading />;
  const reload = () => {
    holdout.reload();
    experiments.reload();
  };
  return (
    <>
      <PageTitle actions={<LifecycleActions holdout={h} onChanged={reload} />}>
        {h.name} <StatusBadge status={h.status} />
      </PageTitle>
      <section class="card summary" data-testid="holdout-summary">
        <Facts
          items={[
            ['Held out', `${h.percent}% of ${h.unit_type} units, on the control of every covered experiment`],
            ['Covers', describeCoverage(h)],
            ['Started', dateTime(h.started_at)],
            ['Ended', dateTime(h.ended_at)],
          ]}
        />
        <p class="muted">
          Held-out units are left out of each covered experiment’s own results; after a launch they keep the control while everyone else gets the launched
          variant.
        </p>
      </section>
      {h.status === 'draft' || h.status === 'running' ? <GrowForm key={h.updated_at} holdout={h} onChanged={reload} /> : null}
      <HoldoutResults holdout={h} onChanged={reload} />
      {experiments.data ? <CoveredExperiments data={experiments.data} /> : <ErrorBox error={experiments.error} />}
    </>
  );
}
