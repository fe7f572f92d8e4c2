import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field } from '../components/ui.js';
import { percent } from '../format.js';
import { useAction } from '../hooks.js';
import type { DecisionRule, Experiment, ExperimentWarning } from '../types.js';

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

/**
 * The units per variant the stopping rule that applies waits for: a bandit's own minimum (its
 * stopping rule replaces the decision rule's), else the decision rule's minimum sample.
 */
export function plannedSample(experiment: Experiment): number {
  return experiment.allocation?.type === 'bandit' ? experiment.allocation.min_units_per_variant : experiment.decision_rule.min_sample_per_variant;
}

/** The stopping rule that applies, in one phrase: a bandit's own, else the decision rule's. */
export function stoppingRuleName(experiment: Experiment): string {
  if (experiment.allocation?.type !== 'bandit') return ruleName(experiment.decision_rule);
  return `Bandit: a variant’s chance of being best reaches ${percent(experiment.allocation.stop_at_prob_best, 1)}`;
}

/** What the rule decides, in one phrase, for summaries. */
export function ruleName(rule: DecisionRule): string {
  return {
    'bayesian.posterior_threshold': `Bayesian: a variant’s probability of being best reaches ${percent(rule.posterior_threshold, 1)}`,
    'bayesian.always_valid_evalue': 'Bayesian always-valid e-value (safe to check any time)',
    'frequentist.sequential_msprt': 'Frequentist sequential test, mSPRT (safe to check any time)',
  }[rule.method];
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

/** Start and archive as buttons; "Stop…" opens the stop form (a reason is required) below the title. */
export function LifecycleButtons({
  experiment,
  onChanged,
  onStopping,
}: {
  experiment: Experiment;
  onChanged: (next?: Experiment) => void;
  onStopping: () => void;
}) {
  const action = useAction();
  const path = `/v1/experiments/${experiment.id}`;
  const start = () => action.run(async () => onChanged(await api<Experiment>('POST', `${path}/start`)));
  const archive = () => {
    if (!confirm(`Archive "${experiment.name}"? Archived experiments stop assigning and cannot be restarted.`)) return;
    void action.run(async () => {
      await api('DELETE', path);
      onChanged();
    });
  };
  return (
    <>
      {experiment.status === 'draft' ? (
        <button type="button" class="primary" disabled={action.busy} onClick={start}>
          Start experiment
        </button>
      ) : null}
      {experiment.status === 'running' ? (
        <button type="button" class="danger" onClick={onStopping}>
          Stop…
        </button>
      ) : null}
      {experiment.status !== 'archived' ? (
        <button type="button" disabled={action.busy} onClick={archive}>
          Archive
        </button>
      ) : null}
      {action.error ? <ErrorBox error={action.error} /> : null}
    </>
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
