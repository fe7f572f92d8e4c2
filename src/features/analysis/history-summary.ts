/**
 * The compact history (`GET .../results/history?fields=summary`): per snapshot what a chart of the
 * experiment over time draws, the recommendation and each variant's primary-metric effect and
 * sample size, without the guardrails, breakdowns and posteriors that make a full snapshot about
 * 20 kB. 168 snapshots of a 28-day experiment then cost a page open a few hundred kB less per
 * hundred snapshots instead of megabytes.
 */
import Type, { type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';
import { RecommendationSchema, type AnalysisSnapshot } from './schemas.js';

const Interval = Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Null()], {
  description: '2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0',
});

export const VariantSummarySchema = Type.Object(
  {
    variant_key: Type.String(),
    is_control: Type.Boolean(),
    sample_size: Type.Integer({ description: 'as the full snapshot’s per_variant[].sample_size' }),
    relative: Type.Union(
      [
        Type.Object({
          mean: Type.Union([Type.Number(), Type.Null()], { description: 'posterior mean of (variant / control − 1); null when the control mean is 0' }),
          credible_interval_95: Interval,
        }),
        Type.Null(),
      ],
      { description: 'the primary metric’s relative effect against the control; null on the control, without a primary metric, or while undefined' },
    ),
    chance_to_beat_control: Type.Union([Type.Number(), Type.Null()], { description: 'null where relative is null' }),
  },
  { description: 'one variant of one snapshot, primary metric only' },
);

export const SnapshotSummarySchema = Type.Object(
  {
    id: Id,
    computed_at: Timestamp,
    trigger: Type.Enum(['api', 'schedule', 'final', 'cli']),
    primary_metric_id: Type.Union([Id, Type.Null()]),
    verdict: Type.Enum(['keep_running', 'winner', 'no_difference', 'max_duration_reached'], { description: 'decision.verdict' }),
    srm_warning: Type.Boolean(),
    recommendation: RecommendationSchema,
    per_variant: Type.Array(VariantSummarySchema),
  },
  { description: 'one snapshot, compact: what a chart over time needs (docs/analysis.md "History")' },
);
export type SnapshotSummary = Static<typeof SnapshotSummarySchema>;

export const AnalysisSummaryHistorySchema = Type.Object(
  {
    experiment_id: Id,
    snapshots: Type.Array(SnapshotSummarySchema, { description: 'oldest first' }),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next (newer) page; null at the end' }),
  },
  { description: 'fields=summary' },
);

export function summarizeSnapshot(snapshot: AnalysisSnapshot): SnapshotSummary {
  return {
    id: snapshot.id,
    computed_at: snapshot.computed_at,
    trigger: snapshot.trigger,
    primary_metric_id: snapshot.primary_metric?.id ?? null,
    verdict: snapshot.decision.verdict,
    srm_warning: snapshot.srm_warning,
    recommendation: snapshot.decision.recommendation,
    per_variant: snapshot.per_variant.map((variant) => ({
      variant_key: variant.variant_key,
      is_control: variant.is_control,
      sample_size: variant.sample_size,
      relative: variant.effect ? { mean: variant.effect.relative.mean, credible_interval_95: variant.effect.relative.credible_interval_95 } : null,
      chance_to_beat_control: variant.effect?.chance_to_beat_control ?? null,
    })),
  };
}
