import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, Select, TextArea } from '../components/ui.js';
import { percent } from '../format.js';
import { useAction } from '../hooks.js';
import type { DecisionRule, Experiment, ExperimentWarning, StopReason } from '../types.js';

/** The decision rule in the words a person acts on. */
export function describeRule(rule: DecisionRule): string {
  const alpha = 1 - rule.posterior_threshold;
  const base = {
    'bayesian.posterior_threshold': `Declares a winner once every variant has at least ${rule.min_sample_per_variant.toLocaleString('en-US')} units and one variant's probability of being best reaches ${percent(rule.posterior_threshold, 2)}.`,
    'bayesian.always_valid_evalue': `Declares a winner once a Gaussian-mixture e-value against the control reaches 1/α (α = ${alpha.toPrecision(2)}); safe to check at any time.`,
    'frequentist.sequential_msprt': `Declares a winner once the mixture sequential probability ratio test against the control rejects at α = ${alpha.toPrecision(2)} (mixing variance from a ${percent(rule.minimum_detectable_effect, 1)} minimum detectable effect); safe to check at any time.`,
  }[rule.method];
  return `${base} After ${rule.max_duration_days} days without a winner the verdict becomes "maximum duration reached". A snapshot is computed every ${rule.snapshot_cadence_minutes} minutes.`;
}

const warningTitles: Record<ExperimentWarning['code'], string> = {
  underpowered: 'Too few units planned for this rule.',
};

/** The experiment's planning warnings; the message of each names the estimate and what to change. */
export function PlanningWarnings({ warnings }: { warnings: ExperimentWarning[] }) {
  return (
    <>
      {warnings.map((warning) => (
        <div key={warning.code} class="warning" role="alert" data-testid={`warning-${warning.code}`}>
          <strong>{warningTitles[warning.code] ?? warning.code}</strong> {warning.message}
        </div>
      ))}
    </>
  );
}

const stopReasons: { value: StopReason; label: string }[] = [
  { value: 'won', label: 'Won — a variant beat the control; ship it' },
  { value: 'lost', label: 'Lost — the change did worse; keep the control' },
  { value: 'inconclusive', label: 'Inconclusive — no clear difference' },
  { value: 'bug', label: 'Bug — the experiment was broken' },
  { value: 'business', label: 'Business — stopped for a business reason' },
];

/** Start, stop (with its reason) and archive, as the lifecycle allows. */
export function Lifecycle({ experiment, onChanged }: { experiment: Experiment; onChanged: (next?: Experiment) => void }) {
  const action = useAction();
  const [reason, setReason] = useState<StopReason>('won');
  const [notes, setNotes] = useState('');
  const path = `/v1/experiments/${experiment.id}`;

  const start = () => action.run(async () => onChanged(await api<Experiment>('POST', `${path}/start`)));
  const stop = (event: Event) => {
    event.preventDefault();
    void action.run(async () => onChanged(await api<Experiment>('POST', `${path}/stop`, { reason, ...(notes ? { outcome_notes: notes } : {}) })));
  };
  const archive = () => {
    if (!confirm(`Archive "${experiment.name}"? Archived experiments stop assigning and cannot be restarted.`)) return;
    void action.run(async () => {
      await api('DELETE', path);
      onChanged();
    });
  };

  return (
    <section aria-labelledby="lifecycle">
      <h2 id="lifecycle">Lifecycle</h2>
      {experiment.status === 'draft' ? (
        <p>
          <button type="button" class="primary" disabled={action.busy} onClick={start}>
            Start experiment
          </button>{' '}
          <span class="muted">Starts assigning units; variant keys can no longer change.</span>
        </p>
      ) : null}
      {experiment.status === 'running' ? (
        <form class="stop" onSubmit={stop}>
          <Select label="Stop reason" value={reason} options={stopReasons} onChange={(e) => setReason(e.currentTarget.value as StopReason)} />
          <TextArea label="Outcome notes (optional)" rows={2} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
          <button type="submit" class="danger" disabled={action.busy}>
            Stop experiment
          </button>
        </form>
      ) : null}
      {experiment.status !== 'archived' ? (
        <p>
          <button type="button" disabled={action.busy} onClick={archive}>
            Archive
          </button>
        </p>
      ) : (
        <p class="muted">Archived: nothing more can change.</p>
      )}
      <ErrorBox error={action.error} />
    </section>
  );
}

/** Changes traffic weights of a draft or running experiment (they must add up to 100). */
export function WeightsEditor({ experiment, onChanged }: { experiment: Experiment; onChanged: (next: Experiment) => void }) {
  const [weights, setWeights] = useState(() => experiment.variants.map((v) => v.weight));
  const action = useAction();
  const total = weights.reduce((sum, w) => sum + (Number.isFinite(w) ? w : 0), 0);
  const changed = weights.some((w, i) => w !== experiment.variants[i]?.weight);

  const save = (event: Event) => {
    event.preventDefault();
    const variants = experiment.variants.map((v, i) => ({
      key: v.key,
      weight: weights[i] ?? v.weight,
      is_control: v.is_control,
      ...(v.description ? { description: v.description } : {}),
    }));
    void action.run(async () => onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, { variants })));
  };

  return (
    <form class="weights" onSubmit={save} aria-labelledby="weights-title">
      <h3 id="weights-title">Change weights</h3>
      {experiment.status === 'running' ? (
        <p class="hint">Changing weights of a running experiment is allowed but flagged on later snapshots; units already assigned keep their variant.</p>
      ) : null}
      <div class="row">
        {experiment.variants.map((variant, i) => (
          <Field
            key={variant.id}
            label={`Weight of ${variant.key} (%)`}
            type="number"
            min={0}
            max={100}
            step={1}
            value={weights[i] ?? 0}
            onInput={(e) => setWeights(weights.map((w, j) => (j === i ? Number(e.currentTarget.value) : w)))}
          />
        ))}
      </div>
      <p class={total === 100 ? 'muted' : 'error'} role="status">
        Total {total}% {total === 100 ? '' : '— weights must add up to 100'}
      </p>
      <button type="submit" disabled={!changed || total !== 100 || action.busy}>
        Save weights
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}
