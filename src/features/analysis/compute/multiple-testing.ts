/**
 * The snapshot's multiple-testing family (docs/statistics.md "Multiple testing"): each
 * non-control variant's effect on each goal (the primary and the secondary metrics), and on each
 * guardrail when the scope says so, gets its two-sided p-value 2·min(c, 1 − c) (c the chance to
 * beat control, as the breakdowns' Holm correction reads it) and the p-value adjusted over the
 * whole family. Holm's adjusted values come with Bonferroni intervals. Breakdown slices keep
 * their own family (breakdowns.ts). Pure.
 */
import { adjustPValues, bonferroniInterval, familySize, type MultipleTestingMethod } from '../../../stats/index.js';
import { twoSidedTail } from '../../../stats/holm.js';
import type { MultipleTestingReport, VariantPosterior } from '../schemas.js';

export interface MultipleTestingSettings {
  method: MultipleTestingMethod;
  scope: 'goals' | 'goals_and_guardrails';
}

/** Each metric's per_variant list: the goals (primary first) and the guardrails. */
export interface CorrectionInput {
  goals: ReadonlyArray<readonly VariantPosterior[]>;
  guardrails: ReadonlyArray<readonly VariantPosterior[]>;
  settings: MultipleTestingSettings;
}

export interface CorrectionResult {
  goals: VariantPosterior[][];
  guardrails: VariantPosterior[][];
  report: MultipleTestingReport;
}

function pValueOf(variant: VariantPosterior): number | null {
  return variant.is_control || !variant.effect ? null : twoSidedTail(variant.effect.chance_to_beat_control);
}

/** A variant with its raw p-value, and its adjusted one when it is in the family (`adjusted` undefined: outside). */
function withPValues(variant: VariantPosterior, adjusted: number | null | undefined, method: MultipleTestingMethod, m: number): VariantPosterior {
  const p = pValueOf(variant);
  if (p === null || !variant.effect) return variant;
  const effect = variant.effect;
  const holm = method === 'holm' && adjusted !== undefined && adjusted !== null;
  const intervals = holm
    ? {
        absolute: bonferroniInterval(effect.absolute.mean, effect.absolute.credible_interval_95, m),
        relative:
          effect.relative.mean !== null && effect.relative.credible_interval_95
            ? bonferroniInterval(effect.relative.mean, effect.relative.credible_interval_95, m)
            : null,
      }
    : null;
  return { ...variant, effect: { ...effect, p_value: p, adjusted_p_value: adjusted ?? null, adjusted_interval_95: intervals } };
}

/** Adds p_value, adjusted_p_value and (Holm) adjusted_interval_95 to every non-control effect. */
export function applyCorrection(input: CorrectionInput): CorrectionResult {
  const inFamily = [...input.goals, ...(input.settings.scope === 'goals_and_guardrails' ? input.guardrails : [])];
  const raw = inFamily.flatMap((list) => list.map(pValueOf));
  const adjusted = adjustPValues(raw, input.settings.method);
  const m = familySize(raw);
  let offset = 0;
  const adjust = (list: readonly VariantPosterior[]) => {
    const result = list.map((variant, index) => withPValues(variant, adjusted[offset + index], input.settings.method, m));
    offset += list.length;
    return result;
  };
  const goals = input.goals.map(adjust);
  const guardrails =
    input.settings.scope === 'goals_and_guardrails'
      ? input.guardrails.map(adjust)
      : input.guardrails.map((list) => list.map((variant) => withPValues(variant, undefined, input.settings.method, m)));
  return { goals, guardrails, report: { method: input.settings.method, scope: input.settings.scope, family_size: m } };
}
