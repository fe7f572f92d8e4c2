/**
 * The planning warnings of experiments as the API shows them: computed with the primary metric's
 * kind, which the experiment row does not hold (one metrics read per answer, a page included).
 */
import type { Executor } from '../../db/database.js';
import { findMetricsByIds } from '../metrics/read.js';
import type { Experiment } from './schemas.js';
import { experimentWarnings } from './warnings.js';

export async function withPlanningWarnings(db: Executor, experiments: readonly Experiment[]): Promise<Experiment[]> {
  const first = experiments[0];
  if (first === undefined) return [];
  const ids = experiments.flatMap((experiment) => (experiment.primary_metric_id ? [experiment.primary_metric_id] : []));
  const kinds = new Map((await findMetricsByIds(db, first.workspace_id, ids)).map((metric) => [metric.id, metric.kind]));
  return experiments.map((experiment) => ({
    ...experiment,
    warnings: experimentWarnings(experiment.decision_rule, experiment.variants, {
      status: experiment.status,
      primaryMetricKind: experiment.primary_metric_id ? (kinds.get(experiment.primary_metric_id) ?? null) : null,
    }),
  }));
}

export async function withPlanningWarning(db: Executor, experiment: Experiment): Promise<Experiment> {
  return (await withPlanningWarnings(db, [experiment]))[0] as Experiment;
}
