/**
 * The planning warnings of experiments as the API shows them: computed with the primary metric's
 * kind, which the experiment row does not hold (one metrics read per answer, a page included),
 * and its baseline from history when the root gives a lookup (planning/warning-baselines.ts).
 */
import type { Executor } from '../../db/database.js';
import { findMetricsByIds, type MetricRow } from '../metrics/read.js';
import type { Experiment } from './schemas.js';
import { experimentWarnings, type HistoryBaselineFacts } from './warnings.js';

/** The primary metric's baseline from the experiment environment's history, or null without one. */
export type HistoryBaselineLookup = (experiment: Experiment, metric: MetricRow) => Promise<HistoryBaselineFacts | null>;

async function historyOf(lookup: HistoryBaselineLookup | undefined, experiment: Experiment, metric: MetricRow | undefined) {
  const planning = experiment.status === 'draft' || experiment.status === 'running';
  return lookup && metric && planning && experiment.allocation?.type !== 'bandit' ? lookup(experiment, metric) : null;
}

export async function withPlanningWarnings(db: Executor, experiments: readonly Experiment[], lookup?: HistoryBaselineLookup): Promise<Experiment[]> {
  const first = experiments[0];
  if (first === undefined) return [];
  const ids = experiments.flatMap((experiment) => (experiment.primary_metric_id ? [experiment.primary_metric_id] : []));
  const metrics = new Map((await findMetricsByIds(db, first.workspace_id, ids)).map((metric) => [metric.id, metric]));
  return Promise.all(
    experiments.map(async (experiment) => {
      const metric = experiment.primary_metric_id ? metrics.get(experiment.primary_metric_id) : undefined;
      return {
        ...experiment,
        warnings: experimentWarnings(experiment.decision_rule, experiment.variants, {
          status: experiment.status,
          primaryMetricKind: experiment.primary_metric_id ? (metric?.kind ?? null) : null,
          history: await historyOf(lookup, experiment, metric),
        }),
      };
    }),
  );
}

export async function withPlanningWarning(db: Executor, experiment: Experiment, lookup?: HistoryBaselineLookup): Promise<Experiment> {
  return (await withPlanningWarnings(db, [experiment], lookup))[0] as Experiment;
}
