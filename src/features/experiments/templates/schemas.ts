import Type, { type Static } from 'typebox';
import { ID_PATTERN, Id, ListOf, PageQuery, Timestamp } from '../../../http/schemas.js';
import { AllocationInput } from '../allocation.js';
import { TagsInput } from '../labels.js';
import { MultipleTestingInput, SecondaryMetricIds } from '../multiple-testing.js';
import { AutoStopInput, DecisionRuleInput, ExperimentInput, UnitType, VarianceReductionInput, VariantInput } from '../schemas.js';

/** What a template may hold: the parts of an experiment that a team starts many from. Every one optional. */
const definitionFields = {
  unit_type: Type.Optional(UnitType),
  variants: Type.Optional(Type.Array(VariantInput, { minItems: 2, maxItems: 20 })),
  decision_rule: Type.Optional(DecisionRuleInput),
  primary_metric_id: Type.Optional(Type.Union([Id, Type.Null()])),
  guardrail_metric_ids: Type.Optional(Type.Array(Id, { maxItems: 20, uniqueItems: true })),
  secondary_metric_ids: Type.Optional(SecondaryMetricIds),
  multiple_testing: Type.Optional(MultipleTestingInput),
  allocation: Type.Optional(AllocationInput),
  auto_stop: Type.Optional(AutoStopInput),
  variance_reduction: Type.Optional(VarianceReductionInput),
  dimensions: Type.Optional(ExperimentInput.properties.dimensions),
  tags: Type.Optional(TagsInput),
};

/** The definition fields, in the order a template lists them. */
export const DEFINITION_FIELDS = Object.keys(definitionFields) as Array<keyof typeof definitionFields>;

export const TemplateDefinition = Type.Object(definitionFields, { additionalProperties: false });
export type TemplateDefinition = Static<typeof TemplateDefinition>;

const naming = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
};

export const TemplateInput = Type.Object(
  {
    ...naming,
    from_experiment_id: Type.Optional(
      Type.String({
        pattern: ID_PATTERN,
        description:
          'start from this experiment of the workspace: its unit type, variants (at their starting weights), metrics, rule, allocation, auto-stop, variance reduction, dimensions and tags; fields of this body replace its',
      }),
    ),
    ...definitionFields,
  },
  { additionalProperties: false },
);
export type TemplateInput = Static<typeof TemplateInput>;

export const TemplatePatch = Type.Object(
  {
    name: Type.Optional(naming.name),
    description: naming.description,
    ...definitionFields,
  },
  {
    additionalProperties: false,
    description: 'any subset of the fields; each one given replaces the template’s (a definition field cannot be removed, only replaced)',
  },
);
export type TemplatePatch = Static<typeof TemplatePatch>;

export const TemplateSchema = Type.Object(
  {
    id: Id,
    workspace_id: Id,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    ...definitionFields,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'an experiment template: fields absent here are not set by it' },
);
export type ExperimentTemplate = Static<typeof TemplateSchema>;

export const TemplateList = ListOf(TemplateSchema, 'experiment templates, oldest first');
export const TemplateListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export const TemplateParams = Type.Object({ id: Type.String() });
