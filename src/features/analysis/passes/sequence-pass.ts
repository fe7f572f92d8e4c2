/**
 * Funnel and retention metrics in a snapshot (docs/metrics.md "Funnel metrics", "Retention
 * metrics"): the store counts, per variant, the units that reached each step (its `sequences`,
 * from raw events in both modes); here the counts become the metric's totals, a per-unit 0/1
 * analysed as a binary metric over the eligible units (the last step's conversions), and each
 * variant's steps with their drop-off and intervals, or its pending units for retention.
 */
import { betaPosterior } from '../../../stats/beta.js';
import { parsePropertyPath } from '../../metrics/property-path.js';
import type { MetricRow } from '../../metrics/read.js';
import type { FunnelStep, RetentionWindow } from '../../metrics/schemas.js';
import { isSequenceKind, parseBound } from '../../metrics/sequence-rules.js';
import type { ExperimentRow } from '../../experiments/read.js';
import type { ViewDeps } from '../deps.js';
import type { FunnelStepResult, VariantPosterior } from '../schemas.js';
import type { MetricTotals, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';
import type { SequenceCounts, SequenceSpec, SequenceTotals } from '../store/sequence-contract.js';

export { isSequenceKind };

/** What the store needs to count one funnel or retention metric. */
export function sequenceSpecOf(metric: MetricRow): SequenceSpec {
  if (metric.kind === 'funnel') {
    const steps = JSON.parse(metric.steps ?? '[]') as FunnelStep[];
    return {
      kind: 'funnel',
      window_ms: metric.unit_dedup_window_ms,
      from_ms: 0,
      steps: steps.map((step) => ({
        event_key: step.event_key,
        where: step.where ? { keys: parsePropertyPath(step.where.property_path), op: step.where.op, value: step.where.value } : null,
      })),
    };
  }
  const window = JSON.parse(metric.retention ?? '{}') as RetentionWindow;
  const from = parseBound(window.from, true);
  return {
    kind: 'retention',
    window_ms: metric.unit_dedup_window_ms,
    from_ms: from.ok ? from.ms : 0,
    steps: [{ event_key: metric.event_key === '' ? null : metric.event_key, where: null }],
  };
}

/** The metrics' counts (null without any funnel or retention metric); `asOf` is the snapshot's time or the stop. */
export async function sequenceTotalsOf(ctx: ViewDeps, row: ExperimentRow, metrics: readonly MetricRow[], computedAt: number): Promise<SequenceTotals | null> {
  const sequenced = metrics.filter((metric) => isSequenceKind(metric.kind));
  if (sequenced.length === 0) return null;
  return ctx.view.sequences({
    workspaceId: row.workspace_id,
    experimentId: row.id,
    metrics: sequenced.map(sequenceSpecOf),
    eventsBefore: row.stopped_at,
    asOf: Math.min(computedAt, row.stopped_at ?? computedAt),
  });
}

/** A metric's counts as the totals of a binary metric: n the eligible units, the last step's units converted. */
function binaryTotals(counts: SequenceCounts | undefined): MetricTotals {
  if (!counts) return { ...EMPTY_TOTALS };
  const converted = counts.steps.at(-1) ?? 0;
  return { ...EMPTY_TOTALS, n: counts.eligible, sum: converted, sum_of_squares: converted, conversions: converted };
}

/**
 * Every metric's totals in the order of `metrics`: the others' from `ordinary` (computed for them
 * alone, in their order), the funnel and retention metrics' from their counts.
 */
export function mergeSequenceTotals(
  metrics: readonly MetricRow[],
  ordinary: { totals: Map<string, VariantTotals>; capsApplied: (number | null)[] },
  sequences: SequenceTotals | null,
): { totals: Map<string, VariantTotals>; capsApplied: (number | null)[] } {
  if (sequences === null) return ordinary;
  const keys = new Set([...ordinary.totals.keys(), ...sequences.keys()]);
  const totals = new Map<string, VariantTotals>();
  for (const key of keys) {
    const given = ordinary.totals.get(key);
    const counts = sequences.get(key) ?? [];
    let plain = 0;
    let sequenced = 0;
    const merged = metrics.map((metric) =>
      isSequenceKind(metric.kind) ? binaryTotals(counts[sequenced++]) : (given?.metrics[plain++] ?? { ...EMPTY_TOTALS }),
    );
    totals.set(key, { variant_key: key, units: given?.units ?? counts[0]?.units ?? 0, metrics: merged });
  }
  let plain = 0;
  const capsApplied = metrics.map((metric) => (isSequenceKind(metric.kind) ? null : (ordinary.capsApplied[plain++] ?? null)));
  return { totals, capsApplied };
}

function interval(conversions: number, units: number): [number, number] | null {
  return units > 0 ? betaPosterior(conversions, units).credibleInterval95 : null;
}

/** A variant's funnel steps: the share of its units at each step, and of those at the step before. */
export function funnelSteps(metric: MetricRow, counts: SequenceCounts): FunnelStepResult[] {
  const steps = JSON.parse(metric.steps ?? '[]') as FunnelStep[];
  return steps.map((step, index) => {
    const conversions = counts.steps[index] ?? 0;
    const before = index === 0 ? counts.eligible : (counts.steps[index - 1] ?? 0);
    return {
      event_key: step.event_key,
      conversions,
      rate: counts.eligible > 0 ? conversions / counts.eligible : null,
      rate_interval_95: interval(conversions, counts.eligible),
      step_rate: before > 0 ? conversions / before : null,
      step_rate_interval_95: interval(conversions, before),
    };
  });
}

/** The per-variant entries of one metric with its steps (funnel) or pending units (retention). */
function withCounts(metric: MetricRow, entries: readonly VariantPosterior[], countsOf: (variantKey: string) => SequenceCounts | undefined): VariantPosterior[] {
  return entries.map((entry) => {
    const counts = countsOf(entry.variant_key) ?? { units: 0, eligible: 0, steps: [] };
    if (metric.kind === 'funnel') return { ...entry, steps: funnelSteps(metric, counts) };
    return { ...entry, pending_units: counts.units - counts.eligible };
  });
}

interface SequenceDocument {
  per_variant: VariantPosterior[];
  guardrails: Array<{ per_variant: VariantPosterior[] }>;
  secondary_metrics: Array<{ per_variant: VariantPosterior[] }>;
}

/** The document with each funnel and retention metric's per-variant entries completed (primary, guardrails, secondaries in `metrics`' order). */
export function withSequenceResults<D extends SequenceDocument>(
  document: D,
  layout: { primary: MetricRow | null; guardrails: readonly MetricRow[]; secondaries: readonly MetricRow[] },
  sequences: SequenceTotals | null,
): D {
  if (sequences === null) return document;
  const metrics = [...(layout.primary ? [layout.primary] : []), ...layout.guardrails, ...layout.secondaries];
  const place = new Map(metrics.filter((metric) => isSequenceKind(metric.kind)).map((metric, index) => [metric, index]));
  const complete = (metric: MetricRow, entries: VariantPosterior[]) => {
    const at = place.get(metric);
    return at === undefined ? entries : withCounts(metric, entries, (key) => sequences.get(key)?.[at]);
  };
  return {
    ...document,
    per_variant: layout.primary ? complete(layout.primary, document.per_variant) : document.per_variant,
    guardrails: document.guardrails.map((guardrail, index) => ({
      ...guardrail,
      per_variant: complete(layout.guardrails[index] as MetricRow, guardrail.per_variant),
    })),
    secondary_metrics: document.secondary_metrics.map((secondary, index) => ({
      ...secondary,
      per_variant: complete(layout.secondaries[index] as MetricRow, secondary.per_variant),
    })),
  };
}
