import type { FieldError } from '../../http/problems.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { validateAudience } from '../assignment/audience.js';
import type { ExperimentStatus } from '../../db/tables/experiments.js';
import {
  CUPED_LOOKBACK_DAYS,
  DEFAULT_DECISION_RULE,
  type AutoStop,
  type AutoStopInput,
  type DecisionRule,
  type Variant,
  type VariantInput,
  type VarianceReduction,
} from './schemas.js';

/** Weight, key and control rules the schema cannot express; pointers are into the request body. */
export function variantErrors(variants: VariantInput[]): FieldError[] {
  const errors: FieldError[] = [];
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0);
  if (total !== 100) errors.push({ pointer: '/variants', message: `weights must sum to 100, got ${total}` });
  const seen = new Set<string>();
  variants.forEach((variant, index) => {
    if (seen.has(variant.key)) errors.push({ pointer: `/variants/${index}/key`, message: `duplicate variant key "${variant.key}"` });
    seen.add(variant.key);
  });
  const controls = variants.flatMap((variant, index) => (variant.is_control ? [index] : []));
  for (const index of controls.slice(1)) {
    errors.push({ pointer: `/variants/${index}/is_control`, message: 'at most one variant can be the control' });
  }
  return errors;
}

export function audienceErrors(audience: unknown): FieldError[] {
  if (audience === null || audience === undefined) return [];
  return validateAudience(audience).map((issue) => ({ pointer: `/audience${issue.pointer}`, message: issue.message }));
}

/**
 * Gives each variant a stable id and makes the control explicit: the flagged one, or the first.
 * Variants already stored keep their ids when matched by key.
 */
export function normalizeVariants(input: VariantInput[], existing: Variant[] = []): Variant[] {
  const hasControl = input.some((variant) => variant.is_control);
  return input.map((variant, index) => {
    const normalized: Variant = {
      id: existing.find((old) => old.key === variant.key)?.id ?? newId(),
      key: variant.key,
      weight: variant.weight,
      is_control: hasControl ? variant.is_control === true : index === 0,
    };
    if (variant.description !== undefined) normalized.description = variant.description;
    return normalized;
  });
}

export function withDefaults(rule: Partial<DecisionRule> | undefined, base: DecisionRule = DEFAULT_DECISION_RULE): DecisionRule {
  return { ...base, ...(rule ?? {}) };
}

/** The stored form of a variance_reduction input: the lookback's default filled in. */
export function normalizeVarianceReduction(input: { method: 'cuped'; lookback_days?: number } | null | undefined): VarianceReduction {
  if (!input) return null;
  return { method: 'cuped', lookback_days: input.lookback_days ?? CUPED_LOOKBACK_DAYS.default };
}

/**
 * `source` is always a breakdown (the API key that logged the exposure), so no dimension may take
 * its name; the schema bounds the count and length.
 */
export function dimensionErrors(dimensions: string[] | undefined): FieldError[] {
  if (!dimensions) return [];
  return dimensions.flatMap((name, index) =>
    name === 'source' ? [{ pointer: `/dimensions/${index}`, message: '"source" is always broken down (by API key) and cannot be a dimension' }] : [],
  );
}

/** Fields a running experiment may change: changing anything else would corrupt the running test. */
// variance_reduction only changes how snapshots are computed, not who is exposed or what is counted.
// auto_stop only decides what happens after a snapshot.
const CHANGEABLE_WHILE_RUNNING = new Set(['name', 'hypothesis', 'audience', 'decision_rule', 'variants', 'variance_reduction', 'dimensions', 'auto_stop']);

export function assertPatchAllowed(status: ExperimentStatus, changed: string[], variantKeysChanged: boolean): void {
  if (status === 'stopped' || status === 'archived') {
    throw problems.experimentNotEditable(`an experiment that is ${status} cannot be changed`);
  }
  if (status !== 'running') return;
  const blocked = changed.filter((field) => !CHANGEABLE_WHILE_RUNNING.has(field));
  if (blocked.length > 0) {
    throw problems.experimentNotEditable(
      `while running only name, hypothesis, audience, decision_rule, variance_reduction, dimensions, auto_stop and variant weights may change; not ${blocked.join(', ')}`,
    );
  }
  if (variantKeysChanged) throw problems.experimentNotEditable('while running the set of variant keys cannot change; only their weights');
}

/** The fields of a patch whose value differs from the stored one (sending unchanged values is fine). */
export function changedFields(patch: Record<string, unknown>, current: Record<string, unknown>): string[] {
  return Object.entries(patch)
    .filter(([field, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(current[field]))
    .map(([field]) => field);
}

/** Every switch filled in (omitted ones are off). */
export function normalizeAutoStop(input: AutoStopInput | null | undefined): AutoStop {
  return {
    on_recommendation: input?.on_recommendation === true,
    on_guardrail_regression: input?.on_guardrail_regression === true,
    on_srm: input?.on_srm === true,
  };
}

/** The decision rules whose error rate holds however often the analysis looks (docs/statistics.md section 7). */
export const ALWAYS_VALID_METHODS: ReadonlySet<DecisionRule['method']> = new Set(['bayesian.always_valid_evalue', 'frequentist.sequential_msprt']);

export const POSTERIOR_THRESHOLD_AUTO_STOP_MESSAGE =
  'auto_stop.on_recommendation needs an always-valid decision rule (bayesian.always_valid_evalue or frequentist.sequential_msprt): ' +
  'bayesian.posterior_threshold is valid at one planned look, but an automatic stop looks at every snapshot, and under continuous monitoring ' +
  'its false-positive rate is 5.7-11% rather than its nominal 1 - posterior_threshold (docs/statistics.md section 7 measures 6.5-8.2% at the default 0.995 over 40 looks)';

/** A stop on the recommendation under a rule that is not valid under continuous monitoring is refused. */
export function autoStopErrors(autoStop: AutoStop, method: DecisionRule['method'], pointer: string): FieldError[] {
  if (!autoStop.on_recommendation || ALWAYS_VALID_METHODS.has(method)) return [];
  return [{ pointer, message: POSTERIOR_THRESHOLD_AUTO_STOP_MESSAGE }];
}
