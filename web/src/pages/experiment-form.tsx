import { KEY_PATTERN, VARIANT_KEY_PATTERN } from '../patterns.js';
import { useState } from 'preact/hooks';
import { api, type FieldError, type Page } from '../api.js';
import { RuleBuilder } from '../components/rule-builder.js';
import { METRIC_POINTERS, SectionErrors } from '../components/section-errors.js';
import { ErrorBox, Field, PageTitle, Select, TextArea } from '../components/ui.js';
import { useFormFields, useResource, useSubmit } from '../hooks.js';
import type { Rule } from '../rules.js';
import { parseDimensions } from './experiment-settings-model.js';
import { navigate } from '../router.js';
import { MetricFields } from './metric-fields.js';
import { DEFAULT_MULTIPLE_TESTING, SecondaryFields, type MultipleTesting } from './secondary-fields.js';
import { DEFAULT_RULE, DecisionRuleFields, ruleFromText, type RuleText } from './decision-rule.js';
import { DEFAULT_CUPED, VarianceReductionFields, cupedFromText, type CupedText } from './variance-reduction.js';
import { AllocationFields, DEFAULT_ALLOCATION, allocationFromText, type AllocationText } from './allocation.js';
import { AUTO_STOP_OFF, AutoStopFields, autoStopFor } from './auto-stop.js';
import { LabelsFieldset, useStartingPoint } from './experiment-start.js';
import type { Environment, Experiment, Metric, MutexGroup, Segment } from '../types.js';

interface VariantRow {
  key: string;
  weight: number;
  description: string;
}

const unitTypes = ['user', 'account', 'session', 'device', 'custom_attribute'].map((value) => ({ value, label: value }));
async function loadChoices() {
  const [environments, metrics, groups, segments] = await Promise.all([
    api<Page<Environment>>('GET', '/v1/environments?limit=200'),
    api<Page<Metric>>('GET', '/v1/metrics?limit=200'),
    api<Page<MutexGroup>>('GET', '/v1/mutex-groups?limit=200'),
    api<Page<Segment>>('GET', '/v1/segments?limit=200'),
  ]);
  return { environments: environments.data, metrics: metrics.data, groups: groups.data, segments: segments.data };
}

function VariantsEditor({
  rows,
  control,
  onRows,
  onControl,
  errorAt,
}: {
  rows: VariantRow[];
  control: number;
  onRows: (rows: VariantRow[]) => void;
  onControl: (i: number) => void;
  errorAt: (pointer: string) => string | null;
}) {
  const set = (i: number, patch: Partial<VariantRow>) => onRows(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  const total = rows.reduce((sum, row) => sum + (Number.isFinite(row.weight) ? row.weight : 0), 0);
  return (
    <fieldset>
      <legend>Variants</legend>
      {rows.map((row, i) => (
        <div class="row variant-row" key={i}>
          <Field
            label={`Variant ${i + 1} key`}
            value={row.key}
            required
            pattern={VARIANT_KEY_PATTERN}
            error={errorAt(`/variants/${i}/key`)}
            onInput={(e) => set(i, { key: e.currentTarget.value })}
          />
          <Field
            label={`Variant ${i + 1} weight (%)`}
            type="number"
            min={0}
            max={100}
            value={row.weight}
            error={errorAt(`/variants/${i}/weight`)}
            onInput={(e) => set(i, { weight: Number(e.currentTarget.value) })}
          />
          <Field label={`Variant ${i + 1} description`} value={row.description} onInput={(e) => set(i, { description: e.currentTarget.value })} />
          <div class="check">
            <input id={`control-${i}`} type="radio" name="control" checked={control === i} onChange={() => onControl(i)} />
            <label for={`control-${i}`}>Control</label>
          </div>
          <button type="button" disabled={rows.length <= 2} aria-label={`Remove variant ${i + 1}`} onClick={() => onRows(rows.filter((_r, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <p class={total === 100 ? 'muted' : 'error'}>Weights total {total}% (must be 100).</p>
      {errorAt('/variants') ? (
        <p class="field-error" role="alert">
          {errorAt('/variants')}
        </p>
      ) : null}
      <button type="button" onClick={() => onRows([...rows, { key: '', weight: 0, description: '' }])}>
        Add variant
      </button>
    </fieldset>
  );
}

type ExperimentDraft = ReturnType<typeof useExperimentDraft>;

function useExperimentDraft() {
  const {
    form: fields,
    setForm: setFields,
    bind: bindField,
  } = useFormFields({ environment_id: '', key: '', name: '', hypothesis: '', unit_type: 'user', primary_metric_id: '', mutex_group_id: '', dimensions: '' });
  const [audience, setAudience] = useState<Rule | null>(null);
  const [audienceMistake, setAudienceMistake] = useState<string | undefined>();
  const [rows, setRows] = useState<VariantRow[]>([
    { key: 'control', weight: 50, description: '' },
    { key: 'treatment', weight: 50, description: '' },
  ]);
  const [control, setControl] = useState(0);
  const [guardrails, setGuardrails] = useState<string[]>([]);
  const [secondaries, setSecondaries] = useState<string[]>([]);
  const [multipleTesting, setMultipleTesting] = useState<MultipleTesting>(DEFAULT_MULTIPLE_TESTING);
  const [rule, setRule] = useState<RuleText>(DEFAULT_RULE);
  const [cuped, setCuped] = useState<CupedText>(DEFAULT_CUPED);
  const [allocation, setAllocation] = useState<AllocationText>(DEFAULT_ALLOCATION);
  const [autoStop, setAutoStop] = useState(AUTO_STOP_OFF);
  const body = (environments: Environment[]) => ({
    environment_id: fields.environment_id || environments[0]?.id || '',
    key: fields.key,
    name: fields.name,
    hypothesis: fields.hypothesis,
    unit_type: fields.unit_type,
    variants: rows.map((row, i) => ({
      key: row.key,
      weight: row.weight,
      is_control: i === control,
      ...(row.description ? { description: row.description } : {}),
    })),
    primary_metric_id: fields.primary_metric_id || null,
    guardrail_metric_ids: guardrails,
    secondary_metric_ids: secondaries.filter((id) => id !== fields.primary_metric_id && !guardrails.includes(id)),
    multiple_testing: multipleTesting,
    mutex_group_id: fields.mutex_group_id || null,
    audience,
    dimensions: parseDimensions(fields.dimensions),
    decision_rule: ruleFromText(rule),
    variance_reduction: cupedFromText(cuped),
    allocation: allocationFromText(allocation),
    auto_stop: autoStopFor(autoStop, ruleFromText(rule).method),
  });
  const audienceState = { audience, setAudience, audienceMistake, setAudienceMistake };
  const settings = { rule, setRule, cuped, setCuped, allocation, setAllocation, autoStop, setAutoStop };
  const goals = { secondaries, setSecondaries, multipleTesting, setMultipleTesting };
  return { fields, setFields, bindField, rows, setRows, control, setControl, guardrails, setGuardrails, body, ...audienceState, ...settings, ...goals };
}

/** The experiment's environment, key, name, hypothesis and unit type. */
function DefinitionFields({
  fields,
  bindField,
  environments,
  errorAt,
}: {
  fields: ExperimentDraft['fields'];
  bindField: ExperimentDraft['bindField'];
  environments: Environment[];
  errorAt: (pointer: string) => string | null;
}) {
  return (
    <fieldset>
      <legend>Definition</legend>
      <Select
        label="Environment"
        value={fields.environment_id || environments[0]?.id || ''}
        options={environments.map((env) => ({ value: env.id, label: env.name }))}
        onChange={bindField('environment_id')}
      />
      <Field
        label="Key"
        required
        pattern={KEY_PATTERN}
        value={fields.key}
        onInput={bindField('key')}
        error={errorAt('/key')}
        hint="Lowercase letters, digits, dot, dash and underscore; what SDKs ask to be assigned to."
      />
      <Field label="Name" required value={fields.name} onInput={bindField('name')} error={errorAt('/name')} />
      <TextArea label="Hypothesis" required rows={3} value={fields.hypothesis} onInput={bindField('hypothesis')} error={errorAt('/hypothesis')} />
      <Select label="Unit type" value={fields.unit_type} options={unitTypes} onChange={bindField('unit_type')} hint="What a unit id identifies." />
    </fieldset>
  );
}

function MetricsFieldset({ draft, metrics, groups, errors }: { draft: ExperimentDraft; metrics: Metric[]; groups: MutexGroup[]; errors: FieldError[] }) {
  const { fields } = draft;
  return (
    <fieldset>
      <legend>Metrics</legend>
      <MetricFields
        metrics={metrics}
        primary={fields.primary_metric_id}
        onPrimary={(value) => draft.setFields({ ...fields, primary_metric_id: value })}
        guardrails={draft.guardrails}
        onGuardrails={draft.setGuardrails}
      />
      <SecondaryFields
        metrics={metrics}
        taken={[fields.primary_metric_id, ...draft.guardrails]}
        secondaries={draft.secondaries}
        onSecondaries={draft.setSecondaries}
        multipleTesting={draft.multipleTesting}
        onMultipleTesting={draft.setMultipleTesting}
      />
      <Select
        label="Mutex group"
        value={fields.mutex_group_id}
        options={[{ value: '', label: 'None' }, ...groups.map((g) => ({ value: g.id, label: g.name }))]}
        onChange={draft.bindField('mutex_group_id')}
      />
      {METRIC_POINTERS.map((prefix) => (
        <SectionErrors key={prefix} errors={errors} prefix={prefix} shown={[]} />
      ))}
    </fieldset>
  );
}

/** The metric a new experiment starts with: the first that is not a ratio (a bandit cannot use a ratio), else the first. */
function defaultPrimary(metrics: Metric[]): Metric | undefined {
  return metrics.find((metric) => metric.kind !== 'ratio') ?? metrics[0];
}

/**
 * A new experiment starts with a primary metric once the workspace's metrics have loaded, when it
 * has one (without it there is nothing to decide on); "None" stays a choice.
 */
function useDefaultPrimary(metrics: Metric[] | null, draft: ExperimentDraft): void {
  const [done, setDone] = useState(false);
  if (done || !metrics) return;
  setDone(true);
  const first = defaultPrimary(metrics);
  if (!draft.fields.primary_metric_id && first) draft.setFields({ ...draft.fields, primary_metric_id: first.id });
}

async function createExperiment(draft: ExperimentDraft, body: Record<string, unknown>): Promise<void> {
  if (draft.audienceMistake) throw new Error(`The audience is not valid JSON: ${draft.audienceMistake}`);
  const created = await api<Experiment>('POST', '/v1/experiments', body);
  navigate(`/experiments/${created.id}`);
}

export function ExperimentForm() {
  const choices = useResource(loadChoices, []);
  const draft = useExperimentDraft();
  const submit = useSubmit();
  const { fields, rule, bindField } = draft;
  const environments = choices.data?.environments ?? [];
  const metrics = choices.data?.metrics ?? [];
  const segments = (choices.data?.segments ?? []).map((s) => ({ key: s.key, name: s.name }));
  useDefaultPrimary(choices.data ? metrics : null, draft);
  const start = useStartingPoint(draft);
  const create = (event: Event) => {
    event.preventDefault();
    void submit.run(() => createExperiment(draft, start.body(draft.body(environments))));
  };

  return (
    <>
      <PageTitle>New experiment</PageTitle>
      <ErrorBox error={choices.error} />
      <form class="stack" onSubmit={create}>
        {start.picker}
        <DefinitionFields fields={fields} bindField={bindField} environments={environments} errorAt={submit.errorAt} />
        <LabelsFieldset labels={start.labels} errorAt={submit.errorAt} />
        <VariantsEditor rows={draft.rows} control={draft.control} onRows={draft.setRows} onControl={draft.setControl} errorAt={submit.errorAt} />
        <MetricsFieldset draft={draft} metrics={metrics} groups={choices.data?.groups ?? []} errors={submit.errors} />
        <DecisionRuleFields rule={rule} onRule={draft.setRule} errorAt={submit.errorAt} />
        <AutoStopFields
          value={draft.autoStop}
          onValue={draft.setAutoStop}
          method={ruleFromText(rule).method}
          error={submit.errorAt('/auto_stop/on_recommendation')}
        />
        <VarianceReductionFields value={draft.cuped} onValue={draft.setCuped} errorAt={submit.errorAt} />
        <AllocationFields value={draft.allocation} onValue={draft.setAllocation} errorAt={submit.errorAt} />
        <RuleBuilder
          label="Audience"
          value={draft.audience}
          onChange={(next, invalid) => {
            draft.setAudience(next);
            draft.setAudienceMistake(invalid);
          }}
          segments={segments}
          errors={submit.errors}
          pointer="/audience"
        />
        <Field
          label="Dimensions"
          value={fields.dimensions}
          onInput={bindField('dimensions')}
          error={submit.errorAt('/dimensions')}
          hint="Up to 5 context attribute names, comma-separated (for example country, device), to break the results down by."
        />
        <ErrorBox error={submit.error} />
        <button type="submit" class="primary" disabled={submit.busy}>
          Create experiment
        </button>
      </form>
    </>
  );
}
