import { api } from '../api.js';
import { ErrorBox } from '../components/ui.js';
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
