import { Field, Select } from '../components/ui.js';
import type { DecisionMethod, DecisionRule } from '../types.js';
import { fromPercentText, toPercentText } from '../units.js';

export const methods: { value: DecisionMethod; label: string }[] = [
  { value: 'bayesian.posterior_threshold', label: 'Bayesian: probability of being best reaches a threshold' },
  { value: 'bayesian.always_valid_evalue', label: 'Bayesian always-valid e-value (safe to peek)' },
  { value: 'frequentist.sequential_msprt', label: 'Frequentist mixture SPRT (safe to peek)' },
];

/**
 * The rule as the form's inputs hold it (text), so a half-typed number is not lost; the threshold
 * and the detectable effect as percentages (99.5, 2), as a person says them.
 */
export type RuleText = { [K in keyof DecisionRule]: string };

export const DEFAULT_RULE: RuleText = {
  method: 'bayesian.posterior_threshold',
  posterior_threshold: '99.5',
  minimum_detectable_effect: '2',
  min_sample_per_variant: '20000',
  max_duration_days: '28',
  snapshot_cadence_minutes: '240',
};

export function ruleText(rule: DecisionRule): RuleText {
  return {
    method: rule.method,
    posterior_threshold: toPercentText(rule.posterior_threshold),
    minimum_detectable_effect: toPercentText(rule.minimum_detectable_effect),
    min_sample_per_variant: String(rule.min_sample_per_variant),
    max_duration_days: String(rule.max_duration_days),
    snapshot_cadence_minutes: String(rule.snapshot_cadence_minutes),
  };
}

export function ruleFromText(text: RuleText): DecisionRule {
  return {
    method: text.method as DecisionMethod,
    posterior_threshold: fromPercentText(text.posterior_threshold),
    minimum_detectable_effect: fromPercentText(text.minimum_detectable_effect),
    min_sample_per_variant: Number(text.min_sample_per_variant),
    max_duration_days: Number(text.max_duration_days),
    snapshot_cadence_minutes: Number(text.snapshot_cadence_minutes),
  };
}

/** The decision rule's inputs, shared by the new-experiment form and the rule editor. */
interface RuleFieldsProps {
  rule: RuleText;
  onRule: (next: RuleText) => void;
  /** The server's problem with a field, by its pointer. */
  errorAt?: (pointer: string) => string | null;
}

export function DecisionRuleFields({ rule, onRule, errorAt }: RuleFieldsProps) {
  const set = (name: keyof RuleText) => (e: { currentTarget: { value: string } }) => onRule({ ...rule, [name]: e.currentTarget.value });
  const error = (name: keyof RuleText) => errorAt?.(`/decision_rule/${name}`) ?? null;
  return (
    <fieldset>
      <legend>Decision rule</legend>
      <Select label="Method" value={rule.method} options={methods} onChange={set('method')} error={error('method')} />
      <div class="row">
        <Field
          label="Threshold (%)"
          type="number"
          step="any"
          min={50}
          max={99.99}
          value={rule.posterior_threshold}
          onInput={set('posterior_threshold')}
          error={error('posterior_threshold')}
          hint="50–99.99%, e.g. 99.5; the sequential rules test at α = 100% − threshold (99.5% is α = 0.5%)."
        />
        <Field
          label="Minimum detectable effect (%)"
          type="number"
          step="any"
          min={0}
          value={rule.minimum_detectable_effect}
          onInput={set('minimum_detectable_effect')}
          error={error('minimum_detectable_effect')}
          hint="The smallest relative change worth finding, e.g. 2 for ±2%."
        />
        <Field
          label="Minimum units per variant"
          type="number"
          min={1}
          value={rule.min_sample_per_variant}
          onInput={set('min_sample_per_variant')}
          error={error('min_sample_per_variant')}
        />
        <Field
          label="Maximum duration (days)"
          type="number"
          min={1}
          value={rule.max_duration_days}
          onInput={set('max_duration_days')}
          error={error('max_duration_days')}
        />
        <Field
          label="Snapshot every (minutes)"
          type="number"
          min={5}
          value={rule.snapshot_cadence_minutes}
          onInput={set('snapshot_cadence_minutes')}
          error={error('snapshot_cadence_minutes')}
        />
      </div>
    </fieldset>
  );
}
