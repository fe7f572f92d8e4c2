import { Labelled, Select } from '../components/ui.js';
import type { Experiment, Metric } from '../types.js';

export type MultipleTesting = Experiment['multiple_testing'];
export const DEFAULT_MULTIPLE_TESTING: MultipleTesting = { method: 'benjamini_hochberg', scope: 'goals' };

const METHODS = [
  { value: 'benjamini_hochberg', label: 'Benjamini-Hochberg (false discovery rate)' },
  { value: 'holm', label: 'Holm (family-wise error, Bonferroni intervals)' },
  { value: 'none', label: 'None (raw p-values)' },
];
const SCOPES = [
  { value: 'goals', label: 'Goals: primary and secondary metrics' },
  { value: 'goals_and_guardrails', label: 'Goals and guardrails' },
];

interface SecondaryFieldsProps {
  metrics: Metric[];
  /** The primary and the guardrails: a secondary metric is neither. */
  taken: string[];
  secondaries: string[];
  onSecondaries: (metricIds: string[]) => void;
  multipleTesting: MultipleTesting;
  onMultipleTesting: (value: MultipleTesting) => void;
}

/** Secondary goal metrics and the multiple-testing correction (docs/statistics.md "Multiple testing"). */
export function SecondaryFields({ metrics, taken, secondaries, onSecondaries, multipleTesting, onMultipleTesting }: SecondaryFieldsProps) {
  const choices = metrics.filter((m) => !taken.includes(m.id));
  return (
    <div data-testid="secondary-fields">
      {choices.length > 0 ? (
        <Labelled
          label="Secondary metrics"
          hint="Goals beside the primary, adjusted with it for multiple testing (select several with Ctrl or ⌘)."
          control={(id, describedBy) => (
            <select
              id={id}
              multiple
              size={Math.min(6, choices.length)}
              aria-describedby={describedBy}
              onChange={(e) => onSecondaries(Array.from(e.currentTarget.selectedOptions, (option) => option.value))}
            >
              {choices.map((m) => (
                <option key={m.id} value={m.id} selected={secondaries.includes(m.id)}>
                  {m.name}
                </option>
              ))}
            </select>
          )}
        />
      ) : null}
      <Select
        label="Multiple-testing correction"
        value={multipleTesting.method}
        options={METHODS}
        onChange={(e) => onMultipleTesting({ ...multipleTesting, method: e.currentTarget.value as MultipleTesting['method'] })}
        hint="Adjusts each goal’s p-value for the others read at once; the recommendation reads the adjusted values."
      />
      <Select
        label="Corrected family"
        value={multipleTesting.scope}
        options={SCOPES}
        onChange={(e) => onMultipleTesting({ ...multipleTesting, scope: e.currentTarget.value as MultipleTesting['scope'] })}
      />
    </div>
  );
}
