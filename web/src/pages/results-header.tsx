import { api } from '../api.js';
import { ErrorBox } from '../components/ui.js';
import { chance, integer, percent, pValue } from '../format.js';
import { useAction } from '../hooks.js';
import type { Experiment, Snapshot, StopReason } from '../types.js';
import type { MetricView, Recommendation, RecommendationCode } from './results-model.js';
import { plannedSample } from './experiment-parts.js';
import { focusVariant } from './results-model.js';
import { liftOf, liftText } from './results-scorecard.js';

/** What the badge reads beside the recommendation: whether the experiment stopped and which variant is the control. */
export interface BadgeContext {
  stopped: boolean;
  controlKey: string | null;
}

const badgeWords: Record<RecommendationCode, (variant: string | null, context: BadgeContext) => string> = {
  ship: (variant) => `Ship ${variant ?? 'the winner'}`,
  // A rollback names the variant to take away; when the control won, the variant to give everyone.
  rollback: (variant, { controlKey }) => (variant === null || variant === controlKey ? `Roll back to ${variant ?? 'the control'}` : `Roll back ${variant}`),
  investigate: () => 'Investigate',
  no_difference: () => 'No difference',
  // A stopped experiment cannot keep running: it stopped before the rule decided.
  keep_running: (_variant, { stopped }) => (stopped ? 'Inconclusive' : 'Keep running'),
};

/** The recommendation as its badge says it: "Ship guided", "Roll back compact", "Investigate". */
export function recommendationWords(code: RecommendationCode, variant: string | null, context: BadgeContext): string {
  return badgeWords[code](variant, context);
}

const RULE_WORDS: Record<string, string> = {
  'bayesian.posterior_threshold': 'probability of being best',
  'bayesian.always_valid_evalue': 'always-valid e-value',
  'frequentist.sequential_msprt': 'sequential test',
};

/**
 * A reason as a person reads it: the rule and the plan's fields in words, p-values as
 * "p < 0.0001", metric names without their keys, and, once the
 * experiment stopped, without advice to stop it or keep it running (a snapshot computed before
 * the stop still carries it).
 */
export function reasonText(message: string, stopped: boolean, metricKeys: string[] = []): string {
  let text = message.replace(/p = (\d+(?:\.\d+)?e[+-]?\d+)/g, (_all, p: string) => pValue(Number(p)));
  // Metrics are named by name; the key in parentheses after it is for programs.
  for (const key of metricKeys) text = text.replaceAll(` (${key})`, '');
  for (const [method, words] of Object.entries(RULE_WORDS)) text = text.replaceAll(method, words);
  text = text.replaceAll('min_sample_per_variant', 'the minimum sample per variant').replaceAll('max_duration_days', 'the maximum duration');
  if (!stopped) return text;
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z])/)
    .filter((sentence) => !/stop the experiment|keep (it |the experiment )?running/i.test(sentence))
    .join(' ');
}

function controlOf(snapshot: Snapshot): string | null {
  return snapshot.per_variant.find((variant) => variant.is_control)?.variant_key ?? null;
}

interface StopAction {
  reason: StopReason;
  label: string;
}

function stopActionOf(recommendation: Recommendation): StopAction | null {
  switch (recommendation.action) {
    case 'ship':
      return { reason: 'won', label: `Stop and ship ${recommendation.variant_key ?? 'the winner'}` };
    case 'rollback':
      return {
        reason: 'lost',
        label: recommendation.reasons.some((reason) => reason.code === 'control_won')
          ? 'Stop and keep the control'
          : `Stop and roll back ${recommendation.variant_key ?? 'the variant'}`,
      };
    case 'no_difference':
      return { reason: 'inconclusive', label: 'Stop as inconclusive' };
    default:
      return null;
  }
}

/** The smallest variant's units against min_sample_per_variant, as words and a bar. */
function SampleProgress({ snapshot, experiment }: { snapshot: Snapshot; experiment: Experiment }) {
  const needed = plannedSample(experiment);
  const smallest = Math.min(...snapshot.per_variant.map((v) => v.sample_size));
  const share = needed > 0 ? Math.min(1, smallest / needed) : 1;
  return (
    <span class="progress-fact" data-testid="sample-progress">
      {integer(smallest)} of {integer(needed)} units per variant ({percent(share, 0)})
      <progress max={1} value={share} aria-label="Progress to the minimum sample per variant" />
    </span>
  );
}

function DayOf({ snapshot, experiment }: { snapshot: Snapshot; experiment: Experiment }) {
  const day = Math.floor(snapshot.decision.days_elapsed ?? 0) + 1;
  return (
    <span data-testid="days">
      Day {integer(day)} of {integer(experiment.decision_rule.max_duration_days)}
    </span>
  );
}

/** The actions the recommendation implies: stop with its reason, or look at the broken slice. */
function HeaderActions({
  experiment,
  recommendation,
  srmSliceId,
  onShowSlice,
  onStopped,
}: {
  experiment: Experiment;
  recommendation: Recommendation;
  srmSliceId: string | null;
  onShowSlice: () => void;
  onStopped: () => void;
}) {
  const action = useAction();
  const stop = stopActionOf(recommendation);
  const run = (what: StopAction) => {
    if (!confirm(`${what.label}? The experiment stops assigning units; its results stay readable.`)) return;
    void action.run(async () => {
      await api('POST', `/v1/experiments/${experiment.id}/stop`, { reason: what.reason });
      onStopped();
    });
  };
  const investigate = recommendation.action === 'investigate' && srmSliceId;
  if (!investigate && (!stop || experiment.status !== 'running')) return null;
  return (
    <div class="actions header-actions">
      {stop && experiment.status === 'running' ? (
        <button type="button" class={recommendation.action === 'ship' ? 'primary' : undefined} disabled={action.busy} onClick={() => run(stop)}>
          {stop.label}
        </button>
      ) : null}
      {investigate ? (
        <a
          class="button"
          href={`#${srmSliceId}`}
          data-testid="investigate-slice"
          onClick={(event) => {
            event.preventDefault();
            onShowSlice();
          }}
        >
          Investigate the slice
        </a>
      ) : null}
      <ErrorBox error={action.error} />
    </div>
  );
}

/**
 * The decision on one line: the recommendation, the variant, its lift with the interval, its
 * chance to beat control, the day and the progress to the minimum sample; then the reasons and
 * the actions they imply.
 */
export function DecisionHeader({
  experiment,
  snapshot,
  recommendation,
  primary,
  metricKeys,
  srmSliceId,
  onShowSlice,
  onStopped,
}: {
  experiment: Experiment;
  snapshot: Snapshot;
  recommendation: Recommendation;
  primary: MetricView | undefined;
  metricKeys: string[];
  srmSliceId: string | null;
  onShowSlice: () => void;
  onStopped: () => void;
}) {
  const variant = focusVariant(snapshot, recommendation);
  const cell = liftOf(variant?.effect);
  const text = cell && primary ? liftText(cell, primary) : null;
  const stopped = experiment.status === 'stopped' || experiment.status === 'archived';
  return (
    <section class={`decision decision-${recommendation.action}`} aria-labelledby="decision-title" data-testid="decision-header">
      <h2 id="decision-title" class="visually-hidden">
        Decision
      </h2>
      <p class="decision-line">
        <span class={`badge rec rec-${recommendation.action}`} data-testid="recommendation">
          {recommendationWords(recommendation.action, recommendation.variant_key, { stopped, controlKey: controlOf(snapshot) })}
        </span>
        {variant && text && primary ? (
          <span>
            <strong>{variant.variant_key}</strong> {text.mean} <span class="muted">({text.interval})</span> on {primary.name}
          </span>
        ) : null}
        {cell ? <span>{chance(cell.chance)} chance to beat control</span> : null}
        <DayOf snapshot={snapshot} experiment={experiment} />
        <SampleProgress snapshot={snapshot} experiment={experiment} />
      </p>
      {stopped ? (
        <p class="muted" data-testid="stopped-note">
          Stopped{experiment.stop_reason ? ` (${experiment.stop_reason})` : ''}: these are the final results; nothing is assigned any more.
        </p>
      ) : null}
      {recommendation.reasons.length > 0 ? (
        <ul class="reasons" data-testid="reasons">
          {recommendation.reasons.map((reason) => (
            <li key={`${reason.code}-${reason.message}`} data-code={reason.code}>
              {reasonText(reason.message, stopped, metricKeys)}
            </li>
          ))}
        </ul>
      ) : null}
      <HeaderActions experiment={experiment} recommendation={recommendation} srmSliceId={srmSliceId} onShowSlice={onShowSlice} onStopped={onStopped} />
    </section>
  );
}
