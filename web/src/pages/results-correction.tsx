// The multiple-testing correction on the scorecard (docs/statistics.md "Multiple testing"): which
// method over which family, and each effect's p-value beside its adjusted one.
import { pValue } from '../format.js';
import type { Effect, Snapshot } from '../types.js';

const METHOD_NAMES = { none: 'no correction', holm: 'Holm', benjamini_hochberg: 'Benjamini-Hochberg' } as const;
const SCOPE_WORDS = { goals: 'the goals', goals_and_guardrails: 'the goals and guardrails' } as const;

/** "p-values adjusted by Benjamini-Hochberg over 3 comparisons of the goals", above the scorecard. */
export function CorrectionNote({ correction }: { correction: Snapshot['multiple_testing'] }) {
  if (!correction) return null;
  const text =
    correction.method === 'none'
      ? `p-values are not adjusted for the ${correction.family_size} comparisons of ${SCOPE_WORDS[correction.scope]} read together.`
      : `p-values adjusted by ${METHOD_NAMES[correction.method]} over the ${correction.family_size} comparisons of ${SCOPE_WORDS[correction.scope]}${correction.method === 'holm' ? ', with Bonferroni intervals' : ''}; the recommendation reads the adjusted ones.`;
  return (
    <p class="hint" data-testid="correction-note">
      {text}
    </p>
  );
}

/** "p = 0.012 · adjusted 0.036" under a score, when the effect carries p-values. */
export function AdjustedLine({ effect, testId }: { effect: Effect | null | undefined; testId: string }) {
  if (!effect || effect.p_value === undefined) return null;
  const adjusted = effect.adjusted_p_value;
  return (
    <div class="hint" data-testid={testId}>
      {pValue(effect.p_value)}
      {adjusted === null || adjusted === undefined ? ' · not in the corrected family' : ` · adjusted ${pValue(adjusted).replace(/^p /, '')}`}
    </div>
  );
}
