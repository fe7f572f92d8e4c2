// Launching a variant of a stopped experiment, and the note on an experiment that holdouts cover.
// The launch starts from the latest recommendation's variant; when the recommendation is not
// "ship" that variant (or the snapshot's checks disagree), a confirmation names every check that
// disagrees before anything is launched.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, Select } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Experiment, ExperimentHoldouts, SnapshotSummary } from '../types.js';
import { latestSummary } from './experiments-standing.js';
import { disagreements } from './stop-dialog.js';

/** What stands against launching `variant`: the recommendation and the snapshot's checks, in words. */
export function launchChecks(experiment: Experiment, summary: SnapshotSummary | null, variant: string): string[] {
  if (!summary) return ['No snapshot of this experiment has been computed: nothing says this variant is better.'];
  const control = experiment.variants.find((item) => item.is_control)?.key;
  if (variant === control) {
    const found =
      summary.recommendation.action === 'ship'
        ? [`The latest recommendation is to ship ${summary.recommendation.variant_key ?? 'a variant'}, not the control.`]
        : [];
    return summary.srm_warning
      ? [...found, 'The split does not match the weights (sample-ratio mismatch): no result of this experiment can be trusted yet.']
      : found;
  }
  // The stop dialog's checks of a win with this variant, worded for a launch.
  return disagreements(experiment, summary, 'won', variant).map((check) => check.replace(', not this outcome.', `, not a launch of ${variant}.`));
}

function useLatestSummary(experiment: Experiment) {
  const [summary, setSummary] = useState<SnapshotSummary | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void latestSummary(experiment)
      .catch(() => null)
      .then((latest) => {
        if (live) setSummary(latest);
      });
    return () => {
      live = false;
    };
  }, [experiment.id]);
  return summary;
}

function CurrentLaunch({ experiment: e }: { experiment: Experiment }) {
  if (!e.launched_variant_key) return <p class="muted">Nothing is launched: assign answers 404 for this experiment.</p>;
  return (
    <p class="notice" data-testid="launched">
      <strong>{e.launched_variant_key}</strong> is launched since {dateTime(e.launched_at)}: every unit of the experiment’s environment and audience gets it
      (reason “launched”) until the experiment is archived.{e.launch_reason ? ` Reason: ${e.launch_reason}` : ''}
    </p>
  );
}

/** The checks that disagree with launching `variant`, and the buttons to launch anyway or not. */
function LaunchConfirmation(props: { variant: string; checks: string[]; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  return (
    <div class="warning" role="alert" data-testid="launch-confirmation">
      <strong>The results do not support launching {props.variant}:</strong>
      <ul>
        {props.checks.map((check) => (
          <li key={check}>{check}</li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          Launch {props.variant} anyway
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The launch card of a stopped experiment: the variant, a reason, and a confirmation naming the checks when they disagree. */
export function LaunchPanel({ experiment: e, onChanged }: { experiment: Experiment; onChanged: () => void }) {
  const summary = useLatestSummary(e);
  const recommended = summary?.recommendation.action === 'ship' ? (summary.recommendation.variant_key ?? '') : '';
  const [variant, setVariant] = useState('');
  const [reason, setReason] = useState('');
  const [confirming, setConfirming] = useState<string[] | null>(null);
  const action = useAction();
  if (e.status !== 'stopped') return null;
  const chosen = variant || recommended || (e.variants.find((item) => !item.is_control)?.key ?? '');
  const send = () =>
    void action.run(async () => {
      await api<Experiment>('POST', `/v1/experiments/${e.id}/launch`, { variant_key: chosen, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setConfirming(null);
      onChanged();
    });
  const launch = (event: Event) => {
    event.preventDefault();
    const checks = launchChecks(e, summary ?? null, chosen);
    if (checks.length > 0) setConfirming(checks);
    else send();
  };
  return (
    <form class="card" onSubmit={launch} aria-labelledby="launch-title" data-testid="launch-panel">
      <h2 id="launch-title">Launch</h2>
      <CurrentLaunch experiment={e} />
      <div class="row">
        <Select
          label="Variant to launch"
          value={chosen}
          options={e.variants.map((item) => ({
            value: item.key,
            label: `${item.key}${item.is_control ? ' (control)' : ''}${item.key === recommended ? ' — recommended' : ''}`,
          }))}
          onChange={(event) => {
            setVariant(event.currentTarget.value);
            setConfirming(null);
          }}
        />
        <Field label="Reason (optional)" value={reason} maxLength={2000} onInput={(event) => setReason(event.currentTarget.value)} />
      </div>
      {confirming ? <LaunchConfirmation variant={chosen} checks={confirming} busy={action.busy} onConfirm={send} onCancel={() => setConfirming(null)} /> : null}
      <ErrorBox error={action.error} />
      {confirming ? null : (
        <button type="submit" class="primary" disabled={action.busy || summary === undefined || chosen === ''}>
          {e.launched_variant_key ? `Launch ${chosen} instead` : `Launch ${chosen}`}
        </button>
      )}
    </form>
  );
}

/** On a covered experiment: which holdouts keep how many units on the control, or its opt-out. */
export function HoldoutNote({ experiment: e }: { experiment: Experiment }) {
  const holdouts = useResource(() => api<ExperimentHoldouts>('GET', `/v1/experiments/${e.id}/holdouts`), [e.id, e.updated_at]);
  const data = holdouts.data;
  if (!data) return null;
  if (data.opt_out) {
    return (
      <p class="muted" data-testid="holdout-note">
        Opted out of holdouts: {data.opt_out.reason}
      </p>
    );
  }
  if (data.holdouts.length === 0) return null;
  return (
    <p class="notice" data-testid="holdout-note">
      {data.holdouts.map((holdout, index) => (
        <span key={holdout.id}>
          {index > 0 ? ' ' : ''}A holdout (<Link href={`/holdouts/${holdout.id}`}>{holdout.name}</Link>) keeps {holdout.percent}% of units on the control
          {e.launched_variant_key ? ' (launched or not)' : ''} and out of this experiment’s results.
        </span>
      ))}
    </p>
  );
}
