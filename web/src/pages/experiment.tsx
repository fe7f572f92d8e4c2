import { DuplicateForm } from './experiment-duplicate.js';
import { CurrentStanding } from './experiment-standing.js';
import { useState } from 'preact/hooks';
import { api, type Page } from '../api.js';
import { ErrorBox, Facts, Loading, PageTitle, StatusBadge } from '../components/ui.js';
import { dateTime, integer } from '../format.js';
import { useResource } from '../hooks.js';
import { Link } from '../router.js';
import { describeRule as describeAudience, type Rule } from '../rules.js';
import type { Environment, Experiment, Metric, MutexGroup, Segment } from '../types.js';
import { ExperimentSettings } from './experiment-settings.js';
import { describeRule, LifecycleButtons, plannedSample, PlanningWarnings, stoppingRuleName } from './experiment-parts.js';
import { StopForm } from './stop-dialog.js';
import { UnitTools } from './experiment-units.js';
import { WeightsOverTime, describeAllocation } from './allocation.js';
import { describeAutoStop } from './auto-stop.js';
import { HoldoutNote, LaunchPanel } from './launch.js';
import { PlanPanel } from './plan-panel.js';

interface Catalogue {
  environments: Environment[];
  metrics: Metric[];
  groups: MutexGroup[];
  segments: Segment[];
}

async function loadCatalogue(): Promise<Catalogue> {
  const [environments, metrics, groups, segments] = await Promise.all([
    api<Page<Environment>>('GET', '/v1/environments?limit=200'),
    api<Page<Metric>>('GET', '/v1/metrics?limit=200'),
    api<Page<MutexGroup>>('GET', '/v1/mutex-groups?limit=200'),
    api<Page<Segment>>('GET', '/v1/segments?limit=200'),
  ]);
  return { environments: environments.data, metrics: metrics.data, groups: groups.data, segments: segments.data };
}

const stopReasonWords: Record<string, string> = {
  won: 'a variant won',
  lost: 'the change lost',
  inconclusive: 'inconclusive',
  bug: 'a bug',
  business: 'a business reason',
};

/** How long it has run: "day 3 of 28", or how long it ran. */
export function runningDays(e: Experiment, now = Date.now()): string {
  if (!e.started_at) return 'not started';
  const end = e.stopped_at ? Date.parse(e.stopped_at) : now;
  const days = Math.floor((end - Date.parse(e.started_at)) / 86_400_000);
  if (!e.stopped_at) return `day ${integer(days + 1)} of ${integer(e.decision_rule.max_duration_days)}`;
  return days === 0 ? 'ran less than a day' : `ran ${integer(days)} day${days === 1 ? '' : 's'}`;
}

/**
 * Who stopped it. An automatic stop says why (the outcome notes say what it found) and links the
 * results it stopped on, since nobody pressed Stop and someone will ask.
 */
function StoppedBy({ experiment: e }: { experiment: Experiment }) {
  if (!e.stopped_by || !e.stopped_at) return null;
  if (e.stopped_by !== 'auto') {
    return (
      <p class="muted" data-testid="stopped-by">
        Stopped {e.stopped_by === 'person' ? 'by a person in the admin UI' : 'through the API'} on {dateTime(e.stopped_at)}.
      </p>
    );
  }
  return (
    <p class="notice" data-testid="stopped-by">
      Stopped automatically on {dateTime(e.stopped_at)}, as <strong>{stopReasonWords[e.stop_reason ?? ''] ?? 'no reason'}</strong>
      {e.outcome_notes ? `: ${autoStopNotes(e.outcome_notes)}` : '.'} <Link href={`/experiments/${e.id}/results`}>See the results it stopped on</Link>.
    </p>
  );
}

/**
 * The auto-stop's notes without their prefix; notes written before they were in words lose the
 * snapshot id they ended with, and a p-value in exponent notation reads as "p < 0.0001".
 */
function autoStopNotes(notes: string): string {
  return notes
    .replace(/^Stopped automatically: /, '')
    .replace(/,? in snapshot [0-9A-Z]+\.?$/, '.')
    .replace(/p = \d(\.\d+)?e-\d+/g, 'p < 0.0001');
}

/** The experiment at a glance: what it tests, on whom, measured how, and where it stands. */
function Summary({ experiment: e, catalogue: cat }: { experiment: Experiment; catalogue: Catalogue | null | undefined }) {
  const metricName = (metricId: string) => cat?.metrics.find((m) => m.id === metricId)?.name ?? 'a deleted metric';
  const segmentName = (key: string) => cat?.segments.find((s) => s.key === key)?.name ?? key;
  const control = e.variants.find((v) => v.is_control);
  return (
    <section class="card summary" aria-labelledby="summary-title" data-testid="experiment-summary">
      <h2 id="summary-title" class="visually-hidden">
        Summary
      </h2>
      <p class="lead">{e.hypothesis}</p>
      <Facts
        items={[
          [
            'Status',
            <span>{e.status === 'stopped' ? `stopped (${stopReasonWords[e.stop_reason ?? ''] ?? 'no reason'}), ${runningDays(e)}` : runningDays(e)}</span>,
          ],
          ['Variants', e.variants.map((v) => `${v.key} ${v.weight}%${v.is_control ? ' (control)' : ''}`).join(' · ')],
          ['Primary metric', e.primary_metric_id ? metricName(e.primary_metric_id) : 'none (results show sample sizes and SRM only)'],
          ['Guardrails', e.guardrail_metric_ids.length ? e.guardrail_metric_ids.map(metricName).join(', ') : 'none'],
          ['Stopping rule', stoppingRuleName(e)],
          ['Minimum sample', `${integer(plannedSample(e))} units per variant, at most ${integer(e.decision_rule.max_duration_days)} days`],
          ['Audience', describeAudience((e.audience as Rule | null) ?? null, segmentName)],
          ['Dimensions', e.dimensions.length ? e.dimensions.join(', ') : 'none'],
          ['Variance reduction', e.variance_reduction ? `CUPED, ${e.variance_reduction.lookback_days}-day lookback` : 'off'],
          ['Auto-stop', describeAutoStop(e.auto_stop)],
          ['Key', <code>{e.key}</code>],
          ['Environment', cat?.environments.find((env) => env.id === e.environment_id)?.name ?? '…'],
          ['Unit', e.unit_type],
          [
            'Assigned by',
            e.assignment_source_id
              ? `elsewhere: exposures read from an assignment source${e.assignment_experiment_key ? ` (as ${e.assignment_experiment_key})` : ''}; Verdict assigns none of its units`
              : 'Verdict',
          ],
          ['Mutex group', e.mutex_group_id ? (cat?.groups.find((g) => g.id === e.mutex_group_id)?.name ?? '…') : 'none'],
          ['Started', dateTime(e.started_at)],
          ...(e.stopped_at ? ([['Stopped', dateTime(e.stopped_at)]] as [string, string][]) : []),
          ...(e.outcome_notes ? ([['Outcome notes', e.outcome_notes]] as [string, string][]) : []),
        ]}
      />
      {e.allocation?.type === 'bandit' ? null : <p class="muted">{describeRule(e.decision_rule)}</p>}
      <p data-testid="allocation">Allocation: {describeAllocation(e.allocation)}</p>
      <WeightsOverTime experiment={e} />
      {e.weights_changed_since_start ? <p class="notice">Weights were changed after the start.</p> : null}
      {control ? null : <p class="warning">No variant is marked as the control.</p>}
    </section>
  );
}

/** The settings form, shown after "Edit": what a draft or a running experiment may still change. */
function Editors({
  experiment: e,
  catalogue: cat,
  onChanged,
  onDirty,
}: {
  experiment: Experiment;
  catalogue: Catalogue | null | undefined;
  onChanged: () => void;
  onDirty: (dirty: boolean) => void;
}) {
  if (e.status !== 'draft' && e.status !== 'running') return <p class="muted">A {e.status} experiment cannot change.</p>;
  const segments = (cat?.segments ?? []).map((s) => ({ key: s.key, name: s.name }));
  return <ExperimentSettings experiment={e} metrics={cat?.metrics} segments={segments} onChanged={onChanged} onDirty={onDirty} />;
}

/** "Edit" opens the settings form; "Done editing" closes it, asking first while it holds unsaved changes. */
function EditToggle({ editing, dirty, onToggle }: { editing: boolean; dirty: boolean; onToggle: () => void }) {
  const toggle = () => {
    if (editing && dirty && !confirm('Close the form and discard the unsaved changes?')) return;
    onToggle();
  };
  return (
    <button type="button" aria-pressed={editing} onClick={toggle}>
      {editing ? 'Done editing' : 'Edit'}
    </button>
  );
}

export function ExperimentDetail({ id }: { id: string }) {
  const experiment = useResource(() => api<Experiment>('GET', `/v1/experiments/${id}`), [id]);
  const catalogue = useResource(loadCatalogue, []);
  const [editing, setEditing] = useState(false);
  // Unsaved settings: closing the form asks first, since it would drop them.
  const [dirty, setDirty] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [duplicating, setDuplicating] = useState(false);
  const e = experiment.data;
  if (experiment.error) return <ErrorBox error={experiment.error} />;
  if (!e) return <Loading />;
  const reload = () => {
    setStopping(false);
    experiment.reload();
  };
  const editable = e.status === 'draft' || e.status === 'running';

  return (
    <>
      <PageTitle
        actions={
          <>
            {e.started_at ? (
              <Link class="button primary" href={`/experiments/${e.id}/results`}>
                View results
              </Link>
            ) : null}
            <LifecycleButtons experiment={e} onChanged={reload} onStopping={() => setStopping(true)} />
            {editable ? (
              <EditToggle
                editing={editing}
                dirty={dirty}
                onToggle={() => {
                  setDirty(false);
                  setEditing(!editing);
                }}
              />
            ) : null}
            <button type="button" aria-pressed={duplicating} onClick={() => setDuplicating(!duplicating)}>
              Duplicate
            </button>
          </>
        }
      >
        {e.name} <StatusBadge status={e.status} />
      </PageTitle>
      {duplicating ? <DuplicateForm experiment={e} onCancel={() => setDuplicating(false)} /> : null}
      {stopping && e.status === 'running' ? <StopForm experiment={e} onChanged={reload} onCancel={() => setStopping(false)} /> : null}
      {e.status === 'archived' ? <p class="muted">Archived: nothing more can change.</p> : null}
      <StoppedBy experiment={e} />
      <CurrentStanding experiment={e} />
      <HoldoutNote experiment={e} />
      <LaunchPanel key={e.updated_at} experiment={e} onChanged={reload} />
      <Summary experiment={e} catalogue={catalogue.data} />
      {/* The planning warnings weigh the decision rule, which a bandit's own stopping rule replaces. */}
      {editable && e.allocation?.type !== 'bandit' ? <PlanningWarnings warnings={e.warnings ?? []} /> : null}
      {e.status === 'draft' && catalogue.data ? <PlanPanel experiment={e} metrics={catalogue.data.metrics} /> : null}
      {editing ? <Editors experiment={e} catalogue={catalogue.data} onChanged={reload} onDirty={setDirty} /> : null}
      <UnitTools experiment={e} />
    </>
  );
}
