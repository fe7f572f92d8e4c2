import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { RuleBuilder, type SegmentChoice } from '../components/rule-builder.js';
import { METRIC_POINTERS, SectionErrors } from '../components/section-errors.js';
import { ErrorBox, Field, TextArea } from '../components/ui.js';
import { useSubmit } from '../hooks.js';
import type { Experiment, Metric } from '../types.js';
import { AllocationFields } from './allocation.js';
import { AutoStopFields } from './auto-stop.js';
import { DecisionRuleFields } from './decision-rule.js';
import {
  changedSections,
  draftOf,
  patchOf,
  SECTION_WORDS,
  sectionsShown,
  weightsTotal,
  type SectionName,
  type SettingsDraft,
} from './experiment-settings-model.js';
import { MetricFields } from './metric-fields.js';
import { SecondaryFields } from './secondary-fields.js';
import { VarianceReductionFields } from './variance-reduction.js';

type Submit = ReturnType<typeof useSubmit>;
type Set = (part: Partial<SettingsDraft>) => void;

interface SettingsProps {
  experiment: Experiment;
  metrics: Metric[] | undefined;
  segments: SegmentChoice[];
  onChanged: (next: Experiment) => void;
}

/**
 * Every setting the experiment may still change, in one form with one Save: one PATCH of the
 * changed sections, applied by the server whole or not at all. Discard starts again from the
 * saved experiment (a fresh form: the audience builder's own state goes too).
 */
export function ExperimentSettings(props: SettingsProps & { onDirty?: (dirty: boolean) => void }) {
  const [generation, setGeneration] = useState(0);
  // The version this form saved last: its fresh form says so rather than just "no unsaved changes".
  const [savedAt, setSavedAt] = useState<string | null>(null);
  return (
    <SettingsForm
      key={`${props.experiment.updated_at}-${generation}`}
      {...props}
      justSaved={savedAt === props.experiment.updated_at}
      onChanged={(next) => {
        setSavedAt(next.updated_at);
        props.onChanged(next);
      }}
      onDiscard={() => setGeneration((g) => g + 1)}
    />
  );
}

/** Asks before leaving the page (closing the tab, reloading) while changes are unsaved. */
function useLeaveWarning(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return undefined;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);
}

interface FormProps extends SettingsProps {
  justSaved: boolean;
  onDiscard: () => void;
  onDirty?: ((dirty: boolean) => void) | undefined;
}

function SettingsForm({ experiment, metrics, segments, onChanged, onDiscard, onDirty, justSaved }: FormProps) {
  const [draft, setDraft] = useState(() => draftOf(experiment));
  const submit = useSubmit();
  const set: Set = (part) => setDraft((current) => ({ ...current, ...part }));
  const shown = sectionsShown(experiment, metrics !== undefined);
  const changed = changedSections(experiment, draft, shown);
  const dirty = changed.length > 0;
  useLeaveWarning(dirty);
  useEffect(() => onDirty?.(dirty), [dirty]);
  const save = (event: Event) => {
    event.preventDefault();
    void submit.run(async () => onChanged(await api<Experiment>('PATCH', `/v1/experiments/${experiment.id}`, patchOf(experiment, draft, changed))));
  };
  const section = (name: SectionName, children: ComponentChildren) =>
    shown.includes(name) ? (
      <div class="settings-section" data-section={name} data-changed={changed.includes(name) ? 'true' : undefined}>
        {children}
      </div>
    ) : null;
  return (
    <form class="card settings-form" onSubmit={save} aria-labelledby="edit-title" data-testid="settings-form">
      <h2 id="edit-title">Edit</h2>
      {section('details', <DetailsFields draft={draft} set={set} submit={submit} segments={segments} />)}
      {section('labels', <LabelsFields draft={draft} set={set} submit={submit} />)}
      {section('allocation', <AllocationFields value={draft.allocation} onValue={(allocation) => set({ allocation })} errorAt={submit.errorAt} />)}
      {section('weights', <WeightsFields experiment={experiment} draft={draft} set={set} submit={submit} />)}
      {section('metrics', metrics ? <MetricsFields metrics={metrics} draft={draft} set={set} submit={submit} /> : null)}
      {section('rule', <DecisionRuleFields rule={draft.rule} onRule={(rule) => set({ rule })} errorAt={submit.errorAt} />)}
      {section('cuped', <VarianceReductionFields value={draft.cuped} onValue={(cuped) => set({ cuped })} errorAt={submit.errorAt} />)}
      {section(
        'autoStop',
        <AutoStopFields
          value={draft.autoStop}
          onValue={(autoStop) => set({ autoStop })}
          method={draft.rule.method as Experiment['decision_rule']['method']}
          error={submit.errorAt('/auto_stop/on_recommendation')}
        />,
      )}
      <div class="save-bar" data-testid="save-bar">
        <p role="status" class={changed.length > 0 ? 'unsaved' : 'muted'} data-testid="unsaved">
          {dirty ? `Unsaved changes: ${changed.map((name) => SECTION_WORDS[name]).join(', ')}.` : justSaved ? 'All changes saved.' : 'No unsaved changes.'}
        </p>
        <ErrorBox error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={changed.length === 0 || submit.busy}>
            {submit.busy ? 'Saving…' : 'Save changes'}
          </button>
          <button type="button" disabled={changed.length === 0 || submit.busy} onClick={onDiscard}>
            Discard changes
          </button>
        </div>
      </div>
    </form>
  );
}

interface PartProps {
  draft: SettingsDraft;
  set: Set;
  submit: Submit;
}

/** Name, hypothesis, audience and dimensions (a new audience decides only for units not yet assigned: assignment is sticky). */
function DetailsFields({ draft, set, submit, segments }: PartProps & { segments: SegmentChoice[] }) {
  return (
    <fieldset>
      <legend>Details</legend>
      <Field label="Experiment name" required value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} error={submit.errorAt('/name')} />
      <TextArea
        label="Hypothesis text"
        rows={2}
        value={draft.hypothesis}
        onInput={(e) => set({ hypothesis: e.currentTarget.value })}
        error={submit.errorAt('/hypothesis')}
      />
      <RuleBuilder
        label="Audience"
        value={draft.audience}
        onChange={(audience, invalid) => set({ audience, audienceMistake: invalid })}
        segments={segments}
        errors={submit.errors}
        pointer="/audience"
      />
      <Field
        label="Dimensions"
        value={draft.dimensions}
        error={submit.errorAt('/dimensions') ?? submit.errors.find((e) => e.pointer?.startsWith('/dimensions/'))?.message ?? null}
        hint="Up to 5 context attribute names, comma-separated, to break the results down by. A new one applies to units assigned afterwards."
        onInput={(e) => set({ dimensions: e.currentTarget.value })}
      />
    </fieldset>
  );
}

/** Tags and owner: changeable in any status (the list filters by them). */
function LabelsFields({ draft, set, submit }: PartProps) {
  const tagError = submit.errorAt('/tags') ?? submit.errors.find((e) => e.pointer?.startsWith('/tags/'))?.message ?? null;
  return (
    <fieldset>
      <legend>Tags and owner</legend>
      <Field
        label="Tags"
        value={draft.tags}
        error={tagError}
        hint="Comma-separated, up to 10 (for example checkout, growth): the experiment list filters by them."
        onInput={(e) => set({ tags: e.currentTarget.value })}
      />
      <Field
        label="Owner"
        value={draft.owner}
        error={submit.errorAt('/owner')}
        hint="Who answers for this test: you, or anyone’s name. Leave empty for nobody."
        onInput={(e) => set({ owner: e.currentTarget.value })}
      />
    </fieldset>
  );
}

/** Traffic weights in %, adding up to 100; on a running experiment a change is flagged on later snapshots. */
function WeightsFields({ experiment, draft, set, submit }: PartProps & { experiment: Experiment }) {
  const total = weightsTotal(draft);
  return (
    <fieldset>
      <legend>Weights</legend>
      {experiment.status === 'running' ? (
        <p class="hint">Changing weights of a running experiment is allowed but flagged on later snapshots; units already assigned keep their variant.</p>
      ) : null}
      <div class="row">
        {experiment.variants.map((variant, i) => (
          <Field
            key={variant.id}
            label={`Weight of ${variant.key} (%)`}
            type="number"
            min={0}
            max={100}
            step={1}
            value={draft.weights[i] ?? ''}
            error={submit.errorAt(`/variants/${i}/weight`)}
            onInput={(e) => {
              const value = e.currentTarget.value;
              set({ weights: draft.weights.map((weight, j) => (j === i ? value : weight)) });
            }}
          />
        ))}
      </div>
      <p class={total === 100 ? 'muted' : 'field-error'} role="status" data-testid="weights-total">
        Total {total}%{total === 100 ? '' : ': the weights must add up to 100%'}
      </p>
      <SectionErrors errors={submit.errors} prefix="/variants" shown={experiment.variants.map((_, i) => `/variants/${i}/weight`)} />
    </fieldset>
  );
}

/** Primary, guardrail and secondary metrics and the correction: only a draft may change them (results depend on them once running). */
function MetricsFields({ metrics, draft, set, submit }: PartProps & { metrics: Metric[] }) {
  return (
    <fieldset>
      <legend>Metrics</legend>
      <MetricFields
        metrics={metrics}
        primary={draft.primary}
        onPrimary={(primary) => set({ primary })}
        guardrails={draft.guardrails}
        onGuardrails={(guardrails) => set({ guardrails })}
      />
      <SecondaryFields
        metrics={metrics}
        taken={[draft.primary, ...draft.guardrails]}
        secondaries={draft.secondaries}
        onSecondaries={(secondaries) => set({ secondaries })}
        multipleTesting={draft.multipleTesting}
        onMultipleTesting={(multipleTesting) => set({ multipleTesting })}
      />
      {METRIC_POINTERS.map((prefix) => (
        <SectionErrors key={prefix} errors={submit.errors} prefix={prefix} shown={[]} />
      ))}
    </fieldset>
  );
}
