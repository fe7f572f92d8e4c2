// The events the alerts slice sends: their `data` (the experiment, the snapshot, the numbers) and
// the summary a person reads in a chat message. docs/webhooks.md "Event types" shows each shape.
import type { OutboundEvent } from '../webhook-endpoints/read.js';
import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';
import type { Experiment } from '../experiments/read.js';
import type { LifecycleEvent } from '../experiments/lifecycle.js';
import { pValueText } from '../../stats/rule-words.js';
import { recommendationOf, worstSrmSlice } from './conditions.js';

type ExperimentRef = Pick<Experiment, 'id' | 'key' | 'name' | 'workspace_id'>;
type Event = OutboundEvent;

export function experimentData(experiment: ExperimentRef) {
  return { id: experiment.id, key: experiment.key, name: experiment.name };
}

function linkTo(publicUrl: string | null, experimentId: string, page: '' | '/results'): string | null {
  return publicUrl ? `${publicUrl}/ui/experiments/${experimentId}${page}` : null;
}

const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)}%`;
const signedPercent = (value: number) => `${value >= 0 ? '+' : ''}${percent(value)}`;

/** "+3.2% (95% interval +1.0% to +5.4%)", relative when the control mean allows it, else absolute. */
export function effectText(effect: NonNullable<VariantPosterior['effect']>): string {
  const relative = effect.relative;
  if (relative.mean !== null && relative.credible_interval_95) {
    const [low, high] = relative.credible_interval_95;
    return `${signedPercent(relative.mean)} (95% interval ${signedPercent(low)} to ${signedPercent(high)})`;
  }
  const [low, high] = effect.absolute.credible_interval_95;
  const fmt = (value: number) => `${value >= 0 ? '+' : ''}${Number(value.toPrecision(3))}`;
  return `${fmt(effect.absolute.mean)} absolute (95% interval ${fmt(low)} to ${fmt(high)})`;
}

/** The effect of a variant on a metric named by its name ("Effect of fast on Checkout conversion"). */
function effectFields(posterior: VariantPosterior | undefined, metricName: string | null) {
  if (!posterior?.effect) return [];
  return [
    { label: `Effect of ${posterior.variant_key}${metricName ? ` on ${metricName}` : ''}`, value: effectText(posterior.effect) },
    { label: 'Chance to beat control', value: percent(posterior.effect.chance_to_beat_control) },
  ];
}

function base(experiment: ExperimentRef, snapshot: AnalysisSnapshot) {
  return { experiment: experimentData(experiment), snapshot_id: snapshot.id, computed_at: snapshot.computed_at };
}

export function recommendationChanged(experiment: ExperimentRef, snapshot: AnalysisSnapshot, publicUrl: string | null): Event {
  const recommendation = recommendationOf(snapshot);
  const variantKey = recommendation?.variant_key ?? null;
  const posterior = snapshot.per_variant.find((variant) => variant.variant_key === variantKey);
  const verb = recommendation?.recommendation ?? 'keep_running';
  const headline = `${experiment.name}: ${verb.replace('_', ' ')}${variantKey ? ` ${variantKey}` : ''}`;
  const primary = snapshot.primary_metric;
  const primaryName = primary ? primary.name || primary.key : null;
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.recommendation_changed',
    data: {
      ...base(experiment, snapshot),
      recommendation: verb,
      variant_key: variantKey,
      effect: posterior?.effect ?? null,
      chance_to_beat_control: posterior?.effect?.chance_to_beat_control ?? null,
      reasons: recommendation?.reasons ?? [],
      primary_metric: primary ? { id: primary.id, key: primary.key, name: primaryName } : null,
      link: linkTo(publicUrl, experiment.id, '/results'),
    },
    summary: {
      headline,
      fields: [
        ...effectFields(posterior, primaryName),
        ...(recommendation?.reasons ?? []).slice(0, 3).map((reason) => ({ label: 'Why', value: reason.message })),
      ],
      link: linkTo(publicUrl, experiment.id, '/results'),
    },
  };
}

export function guardrailRegressed(
  experiment: ExperimentRef,
  snapshot: AnalysisSnapshot,
  harm: { metricId: string; variantKey: string },
  publicUrl: string | null,
): Event {
  const { metricId, variantKey } = harm;
  const regression = snapshot.decision.guardrail_regressions.find((item) => item.metric_id === metricId && item.variant_key === variantKey);
  const guardrail = snapshot.guardrails.find((item) => item.metric_id === metricId);
  const posterior = guardrail?.per_variant.find((variant) => variant.variant_key === variantKey);
  const metricKey = regression?.metric_key ?? guardrail?.metric_key ?? metricId;
  const metricName = regression?.metric_name || guardrail?.metric_name || metricKey;
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.guardrail_regressed',
    data: {
      ...base(experiment, snapshot),
      metric: { id: metricId, key: metricKey, name: metricName },
      variant_key: variantKey,
      effect: posterior?.effect ?? null,
      chance_to_beat_control: regression?.chance_to_beat_control ?? null,
      link: linkTo(publicUrl, experiment.id, '/results'),
    },
    summary: {
      headline: `${experiment.name}: ${variantKey} makes the guardrail ${metricName} worse`,
      fields: effectFields(posterior, metricName),
      link: linkTo(publicUrl, experiment.id, '/results'),
    },
  };
}

export function srmDetected(experiment: ExperimentRef, snapshot: AnalysisSnapshot, publicUrl: string | null): Event {
  const slice = worstSrmSlice(snapshot);
  const p = snapshot.srm_chi_squared_p;
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.srm_detected',
    data: { ...base(experiment, snapshot), p, traffic: snapshot.traffic, worst_slice: slice, link: linkTo(publicUrl, experiment.id, '/results') },
    summary: {
      headline: `${experiment.name}: the split does not match the weights (sample-ratio mismatch); distrust its results`,
      fields: [
        { label: 'Sample ratio test', value: p === null ? 'not computed' : pValueText(p) },
        ...snapshot.traffic.map((variant) => ({
          label: variant.variant_key,
          value: `${variant.exposed_units.toLocaleString('en-US')} units (weight ${variant.weight}%)`,
        })),
        ...(slice ? [{ label: 'Worst slice', value: `${slice.dimension} = ${slice.value} (${pValueText(slice.p)})` }] : []),
      ],
      link: linkTo(publicUrl, experiment.id, '/results'),
    },
  };
}

export function srmCleared(experiment: ExperimentRef, snapshot: AnalysisSnapshot, publicUrl: string | null): Event {
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.srm_cleared',
    data: { ...base(experiment, snapshot), p: snapshot.srm_chi_squared_p, link: linkTo(publicUrl, experiment.id, '/results') },
    summary: { headline: `${experiment.name}: the split matches the weights again`, fields: [], link: linkTo(publicUrl, experiment.id, '/results') },
  };
}

export function noData(experiment: ExperimentRef, snapshot: AnalysisSnapshot, reasons: string, publicUrl: string | null): Event {
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.no_data',
    data: { ...base(experiment, snapshot), reasons: reasons.split('; '), traffic: snapshot.traffic, link: linkTo(publicUrl, experiment.id, '') },
    summary: { headline: `${experiment.name}: ${reasons}`, fields: [], link: linkTo(publicUrl, experiment.id, '') },
  };
}

export function analysisFailed(experiment: ExperimentRef, reason: string, publicUrl: string | null): Event {
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.analysis_failed',
    data: { experiment: experimentData(experiment), reason, link: linkTo(publicUrl, experiment.id, '') },
    summary: {
      headline: `${experiment.name}: the analysis failed`,
      fields: [{ label: 'Error', value: reason.slice(0, 500) }],
      link: linkTo(publicUrl, experiment.id, ''),
    },
  };
}

/** A stop reason as a person says it. */
const STOP_REASONS: Record<NonNullable<Experiment['stop_reason']>, string> = {
  won: 'a variant won',
  lost: 'the control won (rolled back)',
  inconclusive: 'no difference found',
  bug: 'a bug (results not to be trusted)',
  business: 'a business decision',
};

export function lifecycleEvent(event: LifecycleEvent, publicUrl: string | null): Event {
  const { experiment } = event;
  const link = linkTo(publicUrl, experiment.id, '');
  if (event.kind === 'started') {
    return {
      workspaceId: experiment.workspace_id,
      experimentId: experiment.id,
      type: 'experiment.started',
      data: { experiment: experimentData(experiment), started_at: experiment.started_at, started_by_key_id: event.actorId, link },
      summary: { headline: `${experiment.name} started`, fields: experiment.variants.map((v) => ({ label: v.key, value: `${v.weight}%` })), link },
    };
  }
  const by = event.stoppedBy === 'auto' ? 'automatically by its analysis' : event.stoppedBy === 'person' ? 'by a person' : 'by an API key';
  return {
    workspaceId: experiment.workspace_id,
    experimentId: experiment.id,
    type: 'experiment.stopped',
    data: {
      experiment: experimentData(experiment),
      reason: experiment.stop_reason,
      outcome_notes: experiment.outcome_notes,
      stopped_at: experiment.stopped_at,
      stopped_by: event.stoppedBy,
      actor_key_id: event.actorId,
      snapshot_id: event.snapshotId,
      link,
    },
    summary: {
      headline: `${experiment.name} stopped ${by}: ${experiment.stop_reason ? STOP_REASONS[experiment.stop_reason] : 'no reason given'}`,
      fields: experiment.outcome_notes ? [{ label: 'Notes', value: experiment.outcome_notes }] : [],
      link,
    },
  };
}
