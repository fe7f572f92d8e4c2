import { Field, Select } from '../components/ui.js';
import { KEY_PATTERN } from '../patterns.js';
import type { Metric } from '../types.js';
import { durationWords, fromDaysText } from '../units.js';

/** One funnel step as the form holds it (all strings); an empty property path means no condition. */
export interface StepFields {
  event_key: string;
  property_path: string;
  op: string;
  value: string;
}

export const blankStep: StepFields = { event_key: '', property_path: '', op: 'eq', value: '' };

export const MIN_STEPS = 2;
export const MAX_STEPS = 10;

const ops = [
  { value: 'eq', label: 'equals' },
  { value: 'neq', label: 'does not equal' },
  { value: 'gt', label: '>' },
  { value: 'gte', label: '≥' },
  { value: 'lt', label: '<' },
  { value: 'lte', label: '≤' },
];

/** The condition's value as JSON would have it: true/false and numbers as such (numbers always for the comparisons), text otherwise. */
function valueOf(step: StepFields): string | number | boolean {
  const text = step.value.trim();
  if (text === 'true' || text === 'false') return text === 'true';
  if (text !== '' && Number.isFinite(Number(text))) return Number(text);
  return step.value;
}

/** The steps of the request body. */
export function stepsBody(steps: readonly StepFields[]): Array<Record<string, unknown>> {
  return steps.map((step) =>
    step.property_path.trim() === ''
      ? { event_key: step.event_key }
      : { event_key: step.event_key, where: { property_path: step.property_path.trim(), op: step.op, value: valueOf(step) } },
  );
}

/** The editor of a funnel's steps: each an event key and an optional condition on its properties, in order. */
export function StepsEditor({ steps, onChange }: { steps: StepFields[]; onChange: (steps: StepFields[]) => void }) {
  const change = (index: number, field: keyof StepFields, value: string) =>
    onChange(steps.map((step, at) => (at === index ? { ...step, [field]: value } : step)));
  return (
    <fieldset class="funnel-steps" data-testid="funnel-steps">
      <legend>Steps, in order (each after the one before, all within the window)</legend>
      {steps.map((step, index) => (
        <div class="row" key={index} data-testid={`funnel-step-${index + 1}`}>
          <Field
            label={`Step ${index + 1} event key`}
            required
            pattern={KEY_PATTERN}
            value={step.event_key}
            onInput={(e) => change(index, 'event_key', e.currentTarget.value)}
          />
          <Field
            label={`Step ${index + 1} property (optional)`}
            value={step.property_path}
            onInput={(e) => change(index, 'property_path', e.currentTarget.value)}
            hint="Only events whose property meets the condition count, e.g. plan."
          />
          <Select label={`Step ${index + 1} condition`} value={step.op} options={ops} onChange={(e) => change(index, 'op', e.currentTarget.value)} />
          <Field label={`Step ${index + 1} value`} value={step.value} onInput={(e) => change(index, 'value', e.currentTarget.value)} />
          {steps.length > MIN_STEPS ? (
            <button type="button" class="secondary" onClick={() => onChange(steps.filter((_, at) => at !== index))}>
              Remove step {index + 1}
            </button>
          ) : null}
        </div>
      ))}
      {steps.length < MAX_STEPS ? (
        <button type="button" class="secondary" onClick={() => onChange([...steps, { ...blankStep }])}>
          Add a step
        </button>
      ) : null}
    </fieldset>
  );
}

/** The form fields of a funnel's window and a retention metric's {from, to}, in days. */
export interface SequenceWindowFields {
  window: string;
  retention_from: string;
  retention_to: string;
}

export function sequenceBody(kind: string, fields: SequenceWindowFields, steps: readonly StepFields[], eventKey: string): Record<string, unknown> {
  if (kind === 'funnel') return { steps: stepsBody(steps), window: fromDaysText(fields.window) };
  return {
    ...(eventKey ? { event_key: eventKey } : {}),
    retention: { from: fromDaysText(fields.retention_from), to: fromDaysText(fields.retention_to) },
  };
}

type Bind = (name: keyof SequenceWindowFields) => (event: { currentTarget: { value: string } }) => void;

/** A required number of days as a person types it (0.5 is twelve hours); sequenceBody sends it as an ISO 8601 duration. */
function DaysField({ label, value, onInput, hint }: { label: string; value: string; onInput: ReturnType<Bind>; hint: string }) {
  return <Field label={label} type="number" min={0} step="any" required value={value} onInput={onInput} hint={hint} />;
}

export function SequenceWindow({ kind, form, bind }: { kind: string; form: SequenceWindowFields; bind: Bind }) {
  if (kind === 'funnel') {
    return (
      <div class="row">
        <DaysField label="Funnel window (days)" value={form.window} onInput={bind('window')} hint="Every step within this many days of the exposure, e.g. 3." />
      </div>
    );
  }
  return (
    <div class="row">
      <DaysField
        label="Retention from (days)"
        value={form.retention_from}
        onInput={bind('retention_from')}
        hint="Days after the exposure where the window opens, e.g. 7."
      />
      <DaysField
        label="Retention to (days)"
        value={form.retention_to}
        onInput={bind('retention_to')}
        hint="Where it closes, after from, e.g. 14. Units whose window is still open are left out."
      />
    </div>
  );
}

/** A funnel's steps or a retention metric's window in words, for the metric's page. */
export function sequenceWords(metric: Metric): string {
  if (metric.kind === 'funnel') {
    const steps = (metric.steps ?? []).map((step) =>
      step.where ? `${step.event_key} (${step.where.property_path} ${step.where.op} ${JSON.stringify(step.where.value)})` : step.event_key,
    );
    return `${steps.join(' → ')} within ${durationWords(metric.window ?? '')}`;
  }
  const window = metric.retention;
  return `${metric.event_key ?? 'any event'} between ${durationWords(window?.from ?? '')} and ${durationWords(window?.to ?? '')} after the exposure`;
}
