import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Field, FormCard, TextArea } from '../components/ui.js';
import { json } from '../format.js';
import { useFormFields } from '../hooks.js';
import type { Experiment, Metric } from '../types.js';
import { DecisionRuleFields, ruleFromText, ruleText } from './decision-rule.js';
import { MetricFields } from './metric-fields.js';

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
  children: ComponentChildren;
}

/** One card of the experiment page that PATCHes some fields; Save is off until something changed. */
export function PatchForm({ experiment, onChanged, id, title, saveLabel, changed, patch, children }: PatchFormProps) {
  const save = async () => onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, patch()));
  return (
    <FormCard id={id} title={title} submitLabel={saveLabel} level={3} primary={false} ready={changed} onSubmit={save}>
      {children}
    </FormCard>
  );
}

/** The audience box: empty means everyone; anything else must be JSON (said in the form, not sent). */
function parseAudience(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`The audience is not valid JSON: ${(error as Error).message}`);
  }
}

/** "country, plan" as a list of attribute names. */
function parseDimensions(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
}

/**
 * Name, hypothesis, audience and dimensions, which may change while the experiment is a draft or running
 * (a new audience decides only for units not yet assigned: assignment is sticky).
 */
export function DetailsEditor({ experiment, onChanged }: EditorProps) {
  const initial = {
    name: experiment.name,
    hypothesis: experiment.hypothesis,
    audience: experiment.audience ? json(experiment.audience) : '',
    dimensions: (experiment.dimensions ?? []).join(', '),
  };
  const { form, bind } = useFormFields(initial);
  const changed =
    form.name !== initial.name || form.hypothesis !== initial.hypothesis || form.audience !== initial.audience || form.dimensions !== initial.dimensions;
  return (
    <PatchForm
      experiment={experiment}
      onChanged={onChanged}
      id="details-title"
      title="Edit details"
      saveLabel="Save details"
      changed={changed}
      patch={() => ({ name: form.name, hypothesis: form.hypothesis, audience: parseAudience(form.audience), dimensions: parseDimensions(form.dimensions) })}
    >
      <Field label="Experiment name" required value={form.name} onInput={bind('name')} />
      <TextArea label="Hypothesis text" rows={2} value={form.hypothesis} onInput={bind('hypothesis')} />
      <TextArea
        label="Audience rule (JSON)"
        class="mono"
        rows={4}
        value={form.audience}
        hint="Empty: everyone. A new audience only decides for units not yet assigned."
        onInput={bind('audience')}
      />
      <Field
        label="Dimensions"
        value={form.dimensions}
        hint="Up to 5 context attribute names, comma-separated, to break the results down by. A new one applies to units assigned afterwards."
        onInput={bind('dimensions')}
      />
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

/** Primary and guardrail metrics, which only a draft may change (results depend on them once running). */
export function MetricsEditor({ experiment, metrics, onChanged }: EditorProps & { metrics: Metric[] }) {
  const [primary, setPrimary] = useState(experiment.primary_metric_id ?? '');
  const [guardrails, setGuardrails] = useState(experiment.guardrail_metric_ids);
  const changed = primary !== (experiment.primary_metric_id ?? '') || JSON.stringify(guardrails) !== JSON.stringify(experiment.guardrail_metric_ids);
  return (
    <PatchForm
      experiment={experiment}
      onChanged={onChanged}
      id="metrics-title"
      title="Edit metrics"
      saveLabel="Save metrics"
      changed={changed}
      patch={() => ({ primary_metric_id: primary || null, guardrail_metric_ids: guardrails })}
    >
      <MetricFields metrics={metrics} primary={primary} onPrimary={setPrimary} guardrails={guardrails} onGuardrails={setGuardrails} />
    </PatchForm>
  );
}
