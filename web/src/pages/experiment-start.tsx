// What a new experiment starts from and is filed under: an experiment template that fills the
// form, and the tags and owner the list filters by.
import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api.js';
import { Field, Select } from '../components/ui.js';
import { useResource } from '../hooks.js';
import { useLocation } from '../router.js';
import { currentSession } from '../session.js';
import type { DecisionRule, Experiment, ExperimentTemplate } from '../types.js';
import { allocationText, type AllocationText } from './allocation.js';
import { AUTO_STOP_OFF } from './auto-stop.js';
import { DEFAULT_RULE, ruleFromText, ruleText, type RuleText } from './decision-rule.js';
import { tagsOf } from './experiments-labels.js';
import type { MultipleTesting } from './secondary-fields.js';
import { cupedText, type CupedText } from './variance-reduction.js';

/** The setters of the new-experiment form a template fills. */
export interface TemplateTarget {
  fields: Record<string, string>;
  setFields: (fields: never) => void;
  setRows: (rows: { key: string; weight: number; description: string }[]) => void;
  setControl: (index: number) => void;
  setGuardrails: (ids: string[]) => void;
  setSecondaries: (ids: string[]) => void;
  setMultipleTesting: (value: MultipleTesting) => void;
  setRule: (rule: RuleText) => void;
  setCuped: (value: CupedText) => void;
  setAllocation: (value: AllocationText) => void;
  setAutoStop: (value: Experiment['auto_stop']) => void;
}

/** Fills the form with what the template holds; what it does not hold stays as it was. */
export function fillFromTemplate(template: ExperimentTemplate, draft: TemplateTarget, labels: LabelsState): void {
  const fields = { ...draft.fields };
  if (template.unit_type) fields.unit_type = template.unit_type;
  if (template.primary_metric_id !== undefined) fields.primary_metric_id = template.primary_metric_id ?? '';
  if (template.dimensions) fields.dimensions = template.dimensions.join(', ');
  draft.setFields(fields as never);
  if (template.variants) {
    draft.setRows(template.variants.map((v) => ({ key: v.key, weight: v.weight, description: v.description ?? '' })));
    draft.setControl(
      Math.max(
        0,
        template.variants.findIndex((v) => v.is_control),
      ),
    );
  }
  if (template.guardrail_metric_ids) draft.setGuardrails(template.guardrail_metric_ids);
  if (template.secondary_metric_ids) draft.setSecondaries(template.secondary_metric_ids);
  if (template.multiple_testing) draft.setMultipleTesting({ method: 'benjamini_hochberg', scope: 'goals', ...template.multiple_testing });
  if (template.decision_rule) draft.setRule(ruleText({ ...ruleFromText(DEFAULT_RULE), ...template.decision_rule } as DecisionRule));
  if (template.variance_reduction !== undefined) {
    const cuped = template.variance_reduction ? { method: 'cuped' as const, lookback_days: template.variance_reduction.lookback_days ?? 14 } : null;
    draft.setCuped(cupedText(cuped));
  }
  if (template.allocation) draft.setAllocation(allocationText(template.allocation as Experiment['allocation']));
  if (template.auto_stop) draft.setAutoStop({ ...AUTO_STOP_OFF, ...template.auto_stop });
  if (template.tags) labels.setTags(template.tags.join(', '));
}

async function loadTemplates(): Promise<ExperimentTemplate[]> {
  return (await api<Page<ExperimentTemplate>>('GET', '/v1/experiment-templates?limit=200')).data;
}

/**
 * "Start from template": picking one fills the form (and the new experiment's audit entry names it).
 * The address's `template` picks one when the page opens (the templates page links so).
 */
export function StartFromTemplate({ chosen, onChoose }: { chosen: string; onChoose: (template: ExperimentTemplate | null) => void }) {
  const templates = useResource(loadTemplates, []);
  const list = templates.data ?? [];
  const wanted = useLocation().search.get('template');
  const [opened, setOpened] = useState(false);
  useEffect(() => {
    if (opened || !templates.data) return;
    setOpened(true);
    const template = templates.data.find((t) => t.id === wanted);
    if (template) onChoose(template);
  }, [templates.data]);
  if (list.length === 0) return null;
  return (
    <Select
      label="Start from template"
      value={chosen}
      options={[{ value: '', label: 'No template' }, ...list.map((t) => ({ value: t.id, label: t.name }))]}
      hint="Fills the unit type, variants, metrics, rule, allocation and tags the template holds; you can change any of them."
      onChange={(e) => onChoose(list.find((t) => t.id === e.currentTarget.value) ?? null)}
    />
  );
}

export interface LabelsState {
  tags: string;
  setTags: (text: string) => void;
  owner: string;
  setOwner: (text: string) => void;
}

/** The owner starts as the person signed in (a key's session has none). */
export function useLabels(): LabelsState {
  const [tags, setTags] = useState('');
  const [owner, setOwner] = useState(currentSession.user?.name ?? '');
  return { tags, setTags, owner, setOwner };
}

/** The body's tags and owner: the signed-in person's own name stands for their account. */
export function labelsBody(labels: LabelsState): { tags: string[]; owner: string | null } {
  const owner = labels.owner.trim();
  const me = currentSession.user;
  return { tags: tagsOf(labels.tags), owner: owner === '' ? null : me && owner === me.name ? me.id : owner };
}

export function LabelsFieldset({ labels, errorAt }: { labels: LabelsState; errorAt: (pointer: string) => string | null }) {
  const tagError = errorAt('/tags') ?? [...Array(10).keys()].map((i) => errorAt(`/tags/${i}`)).find(Boolean) ?? null;
  return (
    <fieldset>
      <legend>Tags and owner</legend>
      <Field
        label="Tags"
        value={labels.tags}
        onInput={(e) => labels.setTags(e.currentTarget.value)}
        error={tagError}
        hint="Comma-separated, up to 10 (for example checkout, growth): the experiment list filters by them."
      />
      <Field
        label="Owner"
        value={labels.owner}
        onInput={(e) => labels.setOwner(e.currentTarget.value)}
        error={errorAt('/owner')}
        hint="Who answers for this test: you, or anyone’s name. Leave empty for nobody."
      />
    </fieldset>
  );
}

/** The form's template picker and its tags and owner, and the body's part of them. */
export function useStartingPoint(draft: TemplateTarget) {
  const labels = useLabels();
  const [templateId, setTemplateId] = useState('');
  const choose = (template: ExperimentTemplate | null) => {
    setTemplateId(template?.id ?? '');
    if (template) fillFromTemplate(template, draft, labels);
  };
  const body = (base: Record<string, unknown>) => ({ ...base, ...labelsBody(labels), ...(templateId ? { template_id: templateId } : {}) });
  return { labels, body, picker: <StartFromTemplate chosen={templateId} onChoose={choose} /> };
}
