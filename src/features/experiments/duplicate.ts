import type { ExperimentsDeps } from './deps.js';
import type { DuplicateExperimentInput, Experiment, ExperimentInput } from './schemas.js';
import { ownerText } from './labels.js';
import { createExperiment, getExperiment } from './service.js';

type Actor = Parameters<typeof createExperiment>[1];

/**
 * A new draft with the definition of an experiment of the workspace under a new key: variants at
 * the weights it started with (a bandit's first period), metrics (primary, guardrails, secondary and
 * their multiple-testing correction), rule, allocation, audience,
 * dimensions, variance reduction, auto-stop, tags and owner; never its results, lifecycle or stop.
 */
export async function duplicateExperiment(ctx: ExperimentsDeps, actor: Actor, id: string, input: DuplicateExperimentInput): Promise<Experiment> {
  const source = await getExperiment(ctx, actor.workspaceId, id);
  const starting = source.allocation_periods[0]?.weights;
  const copy: ExperimentInput = {
    environment_id: source.environment_id,
    key: input.key,
    name: input.name ?? `Copy of ${source.name}`,
    hypothesis: source.hypothesis,
    unit_type: source.unit_type,
    variants: source.variants.map(({ key, weight, description, is_control }) => ({
      key,
      weight: starting?.[key] ?? weight,
      is_control,
      ...(description ? { description } : {}),
    })),
    audience: source.audience,
    decision_rule: source.decision_rule,
    primary_metric_id: source.primary_metric_id,
    guardrail_metric_ids: source.guardrail_metric_ids,
    secondary_metric_ids: source.secondary_metric_ids,
    multiple_testing: source.multiple_testing,
    mutex_group_id: source.mutex_group_id,
    variance_reduction: source.variance_reduction,
    dimensions: source.dimensions,
    allocation: source.allocation,
    auto_stop: source.auto_stop,
    tags: source.tags,
    owner: ownerText(source.owner),
  } as ExperimentInput;
  return createExperiment(ctx, actor, copy, { duplicated_from: { id: source.id, key: source.key, name: source.name } });
}
