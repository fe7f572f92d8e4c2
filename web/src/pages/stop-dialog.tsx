// The stop dialog: the outcome recorded when a person stops an experiment. It starts from the
// latest recommendation (ship → won with its variant, rollback → lost, no_difference →
// inconclusive; nothing chosen otherwise), asks which variant won when the outcome is a win, and
// says which of the latest snapshot's checks disagree with the choice before it is recorded.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Select, TextArea } from '../components/ui.js';
import { chance, lift } from '../format.js';
import { useAction } from '../hooks.js';
import type { Experiment, SnapshotSummary, StopReason } from '../types.js';
import { latestSummary } from './experiments-standing.js';

const outcomes: { value: StopReason; label: string }[] = [
  { value: 'won', label: 'Won — a variant beat the control; ship it' },
  { value: 'lost', label: 'Lost — the change did worse; keep the control' },
  { value: 'inconclusive', label: 'Inconclusive — no clear difference' },
  { value: 'bug', label: 'Bug — the experiment was broken' },
  { value: 'business', label: 'Business — stopped for a business reason' },
];

const outcomeOfRecommendation: Partial<Record<SnapshotSummary['recommendation']['action'], StopReason>> = {
  ship: 'won',
  rollback: 'lost',
  no_difference: 'inconclusive',
};

const recommendationWords: Record<SnapshotSummary['recommendation']['action'], string> = {
  ship: 'ship',
  rollback: 'roll back',
  investigate: 'investigate',
  no_difference: 'no difference',
  keep_running: 'keep running',
};

/** The chance a winner must reach under the experiment's rule: the bandit's own when it is one. */
function thresholdOf(experiment: Experiment): number {
  return experiment.allocation?.type === 'bandit' ? experiment.allocation.stop_at_prob_best : experiment.decision_rule.posterior_threshold;
}

/** What the latest snapshot says against recording `outcome` (with `variant` for a win), in words. */
export function disagreements(experiment: Experiment, summary: SnapshotSummary | null, outcome: StopReason | '', variant: string): string[] {
  if (!summary || outcome === '' || outcome === 'bug' || outcome === 'business') return [];
  const found: string[] = [];
  const recommended = summary.recommendation;
  const expected = outcomeOfRecommendation[recommended.action];
  const named = recommended.variant_key ? ` ${recommended.variant_key}` : '';
  if (expected !== outcome) found.push(`The latest recommendation is “${recommendationWords[recommended.action]}${named}”, not this outcome.`);
  if (summary.srm_warning) found.push('The split does not match the weights (sample-ratio mismatch): no result of this experiment can be trusted yet.');
  if (outcome !== 'won') return found;
  if (expected === 'won' && recommended.variant_key && variant && variant !== recommended.variant_key) {
    found.push(`The recommendation names ${recommended.variant_key} as the winner, not ${variant}.`);
  }
  const chosen = summary.per_variant.find((item) => item.variant_key === variant);
  const interval = chosen?.relative?.credible_interval_95;
  if (interval && interval[0] <= 0 && interval[1] >= 0) {
    found.push(`The 95% interval of ${variant}’s effect (${lift(interval[0])} to ${lift(interval[1])}) spans zero: it may not beat the control at all.`);
  }
  const threshold = thresholdOf(experiment);
  if (chosen?.chance_to_beat_control != null && chosen.chance_to_beat_control < threshold) {
    found.push(
      `${variant}’s chance to beat the control (${chance(chosen.chance_to_beat_control)}) is below the ${Number((100 * threshold).toFixed(2))}% the rule asks of a winner.`,
    );
  }
  return found;
}

/** The winner named in the outcome notes (the stop request has no field of its own for it). */
function notesWithWinner(outcome: StopReason | '', variant: string, notes: string): string {
  if (outcome !== 'won') return notes;
  return notes ? `Winner: ${variant}. ${notes}` : `Winner: ${variant}.`;
}

/** The latest summary and the outcome and variant chosen, filled in from its recommendation until the person chooses. */
function useRecommendedChoice(experiment: Experiment) {
  const [summary, setSummary] = useState<SnapshotSummary | null>(null);
  const [outcome, setOutcome] = useState<StopReason | ''>('');
  const [variant, setVariant] = useState('');
  useEffect(() => {
    let live = true;
    void latestSummary(experiment)
      .catch(() => null)
      .then((latest) => {
        if (!live || !latest) return;
        setSummary(latest);
        // Only a choice the person has not made yet is filled in from the recommendation.
        setOutcome((current) => current || (outcomeOfRecommendation[latest.recommendation.action] ?? ''));
        if (latest.recommendation.action === 'ship') setVariant((current) => current || (latest.recommendation.variant_key ?? ''));
      });
    return () => {
      live = false;
    };
  }, [experiment.id]);
  return { summary, outcome, setOutcome, variant, setVariant };
}

function Disagreements({ warnings }: { warnings: string[] }) {
  if (warnings.length === 0) return null;
  return (
    <div class="warning" role="alert" data-testid="stop-disagreements">
      <strong>The results disagree with this choice:</strong>
      <ul>
        {warnings.map((warning) => (
          <li key={warning}>{warning}</li>
        ))}
      </ul>
    </div>
  );
}

/** Stops a running experiment with its outcome, the winning variant of a win, and optional notes. */
export function StopForm({ experiment, onChanged, onCancel }: { experiment: Experiment; onChanged: (next: Experiment) => void; onCancel: () => void }) {
  const action = useAction();
  const { summary, outcome, setOutcome, variant, setVariant } = useRecommendedChoice(experiment);
  const [notes, setNotes] = useState('');
  const treatments = experiment.variants.filter((item) => !item.is_control);
  const warnings = disagreements(experiment, summary, outcome, variant);
  const stop = (event: Event) => {
    event.preventDefault();
    const outcomeNotes = notesWithWinner(outcome, variant, notes.trim());
    void action.run(async () =>
      onChanged(
        await api<Experiment>('POST', `/v1/experiments/${experiment.id}/stop`, { reason: outcome, ...(outcomeNotes ? { outcome_notes: outcomeNotes } : {}) }),
      ),
    );
  };
  return (
    <form class="card stop" onSubmit={stop} aria-labelledby="stop-title" data-testid="stop-form">
      <h2 id="stop-title">Stop the experiment</h2>
      {summary ? (
        <p class="muted" data-testid="stop-recommendation">
          The latest snapshot recommends: {recommendationWords[summary.recommendation.action]}
          {summary.recommendation.variant_key ? ` ${summary.recommendation.variant_key}` : ''}.
        </p>
      ) : null}
      <Select
        label="Outcome"
        required
        value={outcome}
        options={[{ value: '', label: 'Choose the outcome…' }, ...outcomes]}
        onChange={(e) => setOutcome(e.currentTarget.value as StopReason | '')}
      />
      {outcome === 'won' ? (
        <Select
          label="Winning variant"
          required
          value={variant}
          options={[{ value: '', label: 'Choose the variant that won…' }, ...treatments.map((item) => ({ value: item.key, label: item.key }))]}
          onChange={(e) => setVariant(e.currentTarget.value)}
        />
      ) : null}
      <Disagreements warnings={warnings} />
      <TextArea label="Outcome notes (optional)" rows={2} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
      <ErrorBox error={action.error} />
      <div class="actions">
        <button type="submit" class="danger" disabled={action.busy || outcome === '' || (outcome === 'won' && variant === '')}>
          Stop experiment
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
