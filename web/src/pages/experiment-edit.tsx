import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, TextArea } from '../components/ui.js';
import { json } from '../format.js';
import { useAction } from '../hooks.js';
import type { Experiment, Metric } from '../types.js';
import { DecisionRuleFields, ruleFromText, ruleText } from './decision-rule.js';
import { MetricFields } from './metric-fields.js';

/** The audience box: empty means everyone; anything else must be JSON (said in the form, not sent). */
function parseAudience(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`The audience is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Name, hypothesis and audience, which may change while the experiment is a draft or running
 * (a new audience decides only for units not yet assigned: assignment is sticky).
 */
export function DetailsEditor({ experiment, onChanged }: { experiment: Experiment; onChanged: (next: Experiment) => void }) {
  const initial = { name: experiment.name, hypothesis: experiment.hypothesis, audience: experiment.audience ? json(experiment.audience) : '' };
  const [form, setForm] = useState(initial);
  const action = useAction();
  const changed = form.name !== initial.name || form.hypothesis !== initial.hypothesis || form.audience !== initial.audience;
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const audience = parseAudience(form.audience);
      onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, { name: form.name, hypothesis: form.hypothesis, audience }));
    });
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="details-title">
      <h3 id="details-title">Edit details</h3>
      <Field label="Experiment name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <TextArea label="Hypothesis text" rows={2} value={form.hypothesis} onInput={(e) => setForm({ ...form, hypothesis: e.currentTarget.value })} />
      <TextArea
        label="Audience rule (JSON)"
        class="mono"
        rows={4}
        value={form.audience}
        hint="Empty: everyone. A new audience only decides for units not yet assigned."
        onInput={(e) => setForm({ ...form, audience: e.currentTarget.value })}
      />
      <ErrorBox error={action.error} />
      <button type="submit" disabled={!changed || action.busy}>
        Save details
      </button>
    </form>
  );
}

/**
 * The decision rule, which may change while the experiment is a draft or running; the next
 * snapshot decides by the new rule (the audit log keeps the old one).
 */
export function DecisionRuleEditor({ experiment, onChanged }: { experiment: Experiment; onChanged: (next: Experiment) => void }) {
  const initial = ruleText(experiment.decision_rule);
  const [rule, setRule] = useState(initial);
  const action = useAction();
  const changed = JSON.stringify(rule) !== JSON.stringify(initial);
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, { decision_rule: ruleFromText(rule) })));
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="rule-title">
      <h3 id="rule-title">Edit decision rule</h3>
      <DecisionRuleFields rule={rule} onRule={setRule} />
      <ErrorBox error={action.error} />
      <button type="submit" disabled={!changed || action.busy}>
        Save decision rule
      </button>
    </form>
  );
}

/** Primary and guardrail metrics, which only a draft may change (results depend on them once running). */
export function MetricsEditor({ experiment, metrics, onChanged }: { experiment: Experiment; metrics: Metric[]; onChanged: (next: Experiment) => void }) {
  const [primary, setPrimary] = useState(experiment.primary_metric_id ?? '');
  const [guardrails, setGuardrails] = useState(experiment.guardrail_metric_ids);
  const action = useAction();
  const changed = primary !== (experiment.primary_metric_id ?? '') || JSON.stringify(guardrails) !== JSON.stringify(experiment.guardrail_metric_ids);
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () =>
      onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, { primary_metric_id: primary || null, guardrail_metric_ids: guardrails })),
    );
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="metrics-title">
      <h3 id="metrics-title">Edit metrics</h3>
      <MetricFields metrics={metrics} primary={primary} onPrimary={setPrimary} guardrails={guardrails} onGuardrails={setGuardrails} />
      <ErrorBox error={action.error} />
      <button type="submit" disabled={!changed || action.busy}>
        Save metrics
      </button>
    </form>
  );
}
