// The experiment page's one settings form, as data: every editable setting as the form holds it
// (text where a person types, percentages as typed), which sections changed, and the one PATCH
// that saves them. The server applies a PATCH whole or not at all, so one Save never leaves half
// the changes behind.
import type { Rule } from '../rules.js';
import type { AutoStop, Experiment } from '../types.js';
import { currentSession } from '../session.js';
import { allocationFromText, allocationText, type AllocationText } from './allocation.js';
import { AUTO_STOP_OFF, autoStopFor } from './auto-stop.js';
import { ruleFromText, ruleText, type RuleText } from './decision-rule.js';
import { tagsOf } from './experiments-labels.js';
import { DEFAULT_MULTIPLE_TESTING, type MultipleTesting } from './secondary-fields.js';
import { cupedFromText, cupedText, type CupedText } from './variance-reduction.js';

export interface SettingsDraft {
  name: string;
  hypothesis: string;
  /** "country, plan" as typed. */
  dimensions: string;
  audience: Rule | null;
  /** What is wrong with the audience's JSON as typed, if anything. */
  audienceMistake: string | undefined;
  /** Each variant's weight in %, as typed. */
  weights: string[];
  allocation: AllocationText;
  primary: string;
  guardrails: string[];
  secondaries: string[];
  multipleTesting: MultipleTesting;
  rule: RuleText;
  cuped: CupedText;
  autoStop: AutoStop;
  /** "checkout, growth" as typed. */
  tags: string;
  /** The owner's name as typed; empty for nobody. */
  owner: string;
}

export type SectionName = 'details' | 'labels' | 'allocation' | 'weights' | 'metrics' | 'rule' | 'cuped' | 'autoStop';

export const SECTION_WORDS: Record<SectionName, string> = {
  details: 'details',
  labels: 'tags and owner',
  allocation: 'allocation',
  weights: 'weights',
  metrics: 'metrics',
  rule: 'decision rule',
  cuped: 'variance reduction',
  autoStop: 'auto-stop',
};

/** "country, plan" as a list of attribute names. */
export function parseDimensions(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
}

export function draftOf(experiment: Experiment): SettingsDraft {
  return {
    name: experiment.name,
    hypothesis: experiment.hypothesis,
    dimensions: (experiment.dimensions ?? []).join(', '),
    audience: (experiment.audience as Rule | null) ?? null,
    audienceMistake: undefined,
    weights: experiment.variants.map((variant) => String(variant.weight)),
    allocation: allocationText(experiment.allocation),
    primary: experiment.primary_metric_id ?? '',
    guardrails: experiment.guardrail_metric_ids,
    secondaries: experiment.secondary_metric_ids ?? [],
    multipleTesting: experiment.multiple_testing ?? DEFAULT_MULTIPLE_TESTING,
    rule: ruleText(experiment.decision_rule),
    cuped: cupedText(experiment.variance_reduction ?? null),
    autoStop: experiment.auto_stop ?? AUTO_STOP_OFF,
    tags: (experiment.tags ?? []).join(', '),
    owner: experiment.owner?.name ?? '',
  };
}

/**
 * The owner as the PATCH sends it: unchanged, the one set (a person stays a person); the signed-in
 * person's own name, their account; any other text, a name; empty, nobody.
 */
function ownerOf(text: string, experiment: Experiment): string | null {
  const owner = text.trim();
  if (owner === (experiment.owner?.name ?? '')) return experiment.owner ? (experiment.owner.user_id ?? experiment.owner.name) : null;
  if (owner === '') return null;
  const me = currentSession.user;
  return me && owner === me.name ? me.id : owner;
}

/**
 * The sections this experiment may still change: a draft everything; a running one not its
 * metrics or allocation (its results depend on them), nor a bandit's weights (it sets them itself).
 */
export function sectionsShown(experiment: Experiment, withMetrics: boolean): SectionName[] {
  const draft = experiment.status === 'draft';
  return [
    'details',
    'labels',
    ...(draft ? (['allocation'] as const) : []),
    ...(draft || experiment.allocation?.type !== 'bandit' ? (['weights'] as const) : []),
    ...(draft && withMetrics ? (['metrics'] as const) : []),
    'rule',
    'cuped',
    'autoStop',
  ];
}

export function weightsTotal(draft: SettingsDraft): number {
  return draft.weights.reduce((sum, weight) => sum + (Number.isFinite(Number(weight)) ? Number(weight) : 0), 0);
}

/** One section's fields as the PATCH sends them. */
function sectionPatch(section: SectionName, draft: SettingsDraft, experiment: Experiment): Record<string, unknown> {
  switch (section) {
    case 'details':
      return { name: draft.name, hypothesis: draft.hypothesis, audience: draft.audience, dimensions: parseDimensions(draft.dimensions) };
    case 'labels':
      return { tags: tagsOf(draft.tags), owner: ownerOf(draft.owner, experiment) };
    case 'allocation':
      return { allocation: allocationFromText(draft.allocation) };
    case 'weights':
      return {
        variants: experiment.variants.map((variant, i) => ({
          key: variant.key,
          weight: Number(draft.weights[i] ?? variant.weight),
          is_control: variant.is_control,
          ...(variant.description ? { description: variant.description } : {}),
        })),
      };
    case 'metrics':
      return {
        primary_metric_id: draft.primary || null,
        guardrail_metric_ids: draft.guardrails,
        secondary_metric_ids: draft.secondaries.filter((id) => id !== draft.primary && !draft.guardrails.includes(id)),
        multiple_testing: draft.multipleTesting,
      };
    case 'rule':
      return { decision_rule: ruleFromText(draft.rule) };
    case 'cuped':
      return { variance_reduction: cupedFromText(draft.cuped) };
    case 'autoStop':
      // Under the rule as edited: a posterior-threshold rule turns the recommendation's stop off.
      return { auto_stop: autoStopFor(draft.autoStop, ruleFromText(draft.rule).method) };
  }
}

/** The shown sections whose fields differ from the experiment's (a JSON mistake in the audience counts, so Save can name it). */
export function changedSections(experiment: Experiment, draft: SettingsDraft, shown: readonly SectionName[]): SectionName[] {
  const saved = draftOf(experiment);
  return shown.filter(
    (section) =>
      (section === 'details' && draft.audienceMistake !== undefined) ||
      JSON.stringify(sectionPatch(section, draft, experiment)) !== JSON.stringify(sectionPatch(section, saved, experiment)),
  );
}

/** The one PATCH of the changed sections; throws, sending nothing, on a mistake the form can name itself. */
export function patchOf(experiment: Experiment, draft: SettingsDraft, sections: readonly SectionName[]): Record<string, unknown> {
  if (sections.includes('details') && draft.audienceMistake) throw new Error(`The audience is not valid JSON: ${draft.audienceMistake}`);
  if (sections.includes('weights') && weightsTotal(draft) !== 100) throw new Error(`The weights add up to ${weightsTotal(draft)}%, not 100%.`);
  return Object.assign({}, ...sections.map((section) => sectionPatch(section, draft, experiment))) as Record<string, unknown>;
}
