import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { RuleBuilder, type SegmentChoice } from '../components/rule-builder.js';
import { ErrorBox, Field, TextArea } from '../components/ui.js';
import { useFormFields, useSubmit } from '../hooks.js';
import type { Rule } from '../rules.js';
import type { Experiment, Metric } from '../types.js';
import { DecisionRuleFields, ruleFromText, ruleText } from './decision-rule.js';
import { MetricFields } from './metric-fields.js';
import { DEFAULT_MULTIPLE_TESTING, SecondaryFields } from './secondary-fields.js';

export interface EditorProps {
  experiment: Experiment;
  onChanged: (next: Experiment) => void;
}

interface PatchFormProps extends EditorProps {
  id: string;
  title: string;
  saveLabel: string;
  changed: boolean;
  /** The PATCH body; may throw to name a mistake in the form (nothing is sent then). */
  patch: () => Record<string, unknown>;
  /** The fields; given the server's problems by pointer when it is a function. */
  children: ComponentChildren | ((submit: Submit) => ComponentChildren);
}

type Submit = ReturnType<typeof useSubmit>;

/** One card of the experiment page that PATCHes some fields; Save is off until something changed. */
export function PatchForm({ experiment, onChanged, id, title, saveLabel, changed, patch, children }: PatchFormProps) {
  const submit = useSubmit();
  const save = (event: Event) => {
    event.preventDefault();
    void submit.run(async () => onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, patch())));
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {typeof children === 'function' ? children(submit) : children}
      <ErrorBox error={submit.error} />
      <button type="submit" disabled={!changed || submit.busy}>
        {saveLabel}
      </button>
    </form>
  );
}

/** "country, plan" as a list of attribute names. */
export function parseDimensions(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
}

/**
 * Name, hypothesis, audience and dimensions, which may change while the experiment is a draft or running
 * (a new audience decides only for units not yet assigned: assignment is sticky).
 */
export function DetailsEditor({ experiment, onChanged, segments }: EditorProps & { segments: SegmentChoice[] }) {
  const initial = { name: experiment.name, hypothesis: experiment.hypothesis, dimensions: (experiment.dimensions ?? []).join(', ') };
  const { form, bind } = useFormFields(initial);
  const [audience, setAudience] = useState<Rule | null>((experiment.audience as Rule | null) ?? null);
  const [mistake, setMistake] = useState<string | undefined>();
  // A JSON mistake counts as a change, so Save can say what is wrong with it.
  const changed =
    Boolean(mistake) ||
    form.name !== initial.name ||
    form.hypothesis !== initial.hypothesis ||
    form.dimensions !== initial.dimensions ||
    JSON.stringify(audience) !== JSON.stringify(experiment.audience ?? null);
  const patch = () => {
    if (mistake) throw new Error(`The audience is not valid JSON: ${mistake}`);
    return { name: form.name, hypothesis: form.hypothesis, audience, dimensions: parseDimensions(form.dimensions) };
  };
  return (
    <PatchForm experiment={experiment} onChanged={onChanged} id="details-title" title="Edit details" saveLabel="Save details" changed={changed} patch={patch}>
      {(submit) => (
        <>
          <Field label="Experiment name" required value={form.name} onInput={bind('name')} error={submit.errorAt('/name')} />
          <TextArea label="Hypothesis text" rows={2} value={form.hypothesis} onInput={bind('hypothesis')} error={submit.errorAt('/hypothesis')} />
          <RuleBuilder
            label="Audience"
            value={audience}
            onChange={(next, invalid) => {
              setAudience(next);
              setMistake(invalid);
            }}
            segments={segments}
            errors={submit.errors}
            pointer="/audience"
          />
          <Field
            label="Dimensions"
            value={form.dimensions}
            error={submit.errorAt('/dimensions')}
            hint="Up to 5 context attribute names, comma-separated, to break the results down by. A new one applies to units assigned afterwards."
            onInput={bind('dimensions')}
          />
        </>
      )}
    </PatchForm>
  );
}

/**
 * The decision rule, which may change while the experiment is a draft or running; the next
 * snapshot decides by the new rule (the audit log keeps the old one).
 */
export function DecisionRuleEditor({ experiment, onChanged }: EditorProps) {
  const initial = ruleText(experiment.decision_rule);
  const [rule, setRule] = useState(initial);
  return (
    <PatchForm
      experiment={experiment}
      onChanged={onChanged}
      id="rule-title"
      title="Edit decision rule"
      saveLabel="Save decision rule"
      changed={JSON.stringify(rule) !== JSON.stringify(initial)}
      patch={() => ({ decision_rule: ruleFromText(rule) })}
    >
      <DecisionRuleFields rule={rule} onRule={setRule} />
    </PatchForm>
  );
}

/** Primary, guardrail and secondary metrics and the correction, which only a draft may change (results depend on them once running). */
export function MetricsEditor({ experiment, metrics, onChanged }: EditorProps & { metrics: Metric[] }) {
  const [primary, setPrimary] = useState(experiment.primary_metric_id ?? '');
  const [guardrails, setGuardrails] = useState(experiment.guardrail_metric_ids);
  const [secondaries, setSecondaries] = useState(experiment.secondary_metric_ids ?? []);
  const [multipleTesting, setMultipleTesting] = useState(experiment.multiple_testing ?? DEFAULT_MULTIPLE_TESTING);
  const goals = { secondary_metric_ids: secondaries.filter((id) => id !== primary && !guardrails.includes(id)), multiple_testing: multipleTesting };
  const changed =
    primary !== (experiment.primary_metric_id ?? '') ||
    JSON.stringify(guardrails) !== JSON.stringify(experiment.guardrail_metric_ids) ||
    JSON.stringify(goals) !== JSON.stringify({ secondary_metric_ids: experiment.secondary_metric_ids, multiple_testing: experiment.multiple_testing });
  return (
    <PatchForm
      experiment={experiment}
      onChanged={onChanged}
      id="metrics-title"
      title="Edit metrics"
      saveLabel="Save metrics"
      changed={changed}
      patch={() => ({ primary_metric_id: primary || null, guardrail_metric_ids: guardrails, ...goals })}
    >
      <MetricFields metrics={metrics} primary={primary} onPrimary={setPrimary} guardrails={guardrails} onGuardrails={setGuardrails} />
      <SecondaryFields
        metrics={metrics}
        taken={[primary, ...guardrails]}
        secondaries={secondaries}
        onSecondaries={setSecondaries}
        multipleTesting={multipleTesting}
        onMultipleTesting={setMultipleTesting}
      />
    </PatchForm>
  );
}
