/**
 * An experiment's goals beside the primary metric and how their p-values are adjusted for being
 * read together (docs/statistics.md "Multiple testing"). Stored as JSON text (0034); null reads
 * as the default.
 */
import Type, { type Static } from 'typebox';
import type { FieldError } from '../../http/problems.js';
import { Id } from '../../http/schemas.js';
import { MULTIPLE_TESTING_METHODS } from '../../stats/index.js';

export const MULTIPLE_TESTING_SCOPES = ['goals', 'goals_and_guardrails'] as const;

export const MultipleTestingInput = Type.Object(
  {
    method: Type.Optional(
      Type.Enum([...MULTIPLE_TESTING_METHODS], {
        description: 'benjamini_hochberg (default): false discovery rate; holm: family-wise error rate, with Bonferroni intervals; none: raw p-values',
      }),
    ),
    scope: Type.Optional(
      Type.Enum([...MULTIPLE_TESTING_SCOPES], {
        description: 'goals (default): the primary and secondary metrics; goals_and_guardrails: the guardrails join the family',
      }),
    ),
  },
  { additionalProperties: false, description: 'how goal p-values are adjusted for being read at once; omitted fields take their defaults' },
);
export type MultipleTestingInput = Static<typeof MultipleTestingInput>;

export const MultipleTestingSchema = Type.Object(
  { method: Type.Enum([...MULTIPLE_TESTING_METHODS]), scope: Type.Enum([...MULTIPLE_TESTING_SCOPES]) },
  { description: 'the correction applied to each non-control variant’s p-value over the family (docs/statistics.md "Multiple testing")' },
);
export type MultipleTesting = Static<typeof MultipleTestingSchema>;

export const DEFAULT_MULTIPLE_TESTING: MultipleTesting = { method: 'benjamini_hochberg', scope: 'goals' };

export const SecondaryMetricIds = Type.Array(Id, {
  maxItems: 20,
  uniqueItems: true,
  description: 'goal metrics beside the primary: analysed like it and adjusted with it for multiple testing (not the primary, not a guardrail)',
});

export function normalizeMultipleTesting(input: MultipleTestingInput | null | undefined): MultipleTesting {
  return { ...DEFAULT_MULTIPLE_TESTING, ...(input ?? {}) };
}

export function parseMultipleTesting(stored: string | null | undefined): MultipleTesting {
  return normalizeMultipleTesting(stored ? (JSON.parse(stored) as MultipleTestingInput) : null);
}

export function parseSecondaryMetricIds(stored: string | null | undefined): string[] {
  return stored ? (JSON.parse(stored) as string[]) : [];
}

/** A secondary metric is a goal beside the primary: it cannot be the primary or a guardrail as well. */
export function secondaryOverlapErrors(primaryId: string | null, guardrailIds: readonly string[], secondaryIds: readonly string[]): FieldError[] {
  return secondaryIds.flatMap((id, index) => {
    if (id === primaryId)
      return [{ pointer: `/secondary_metric_ids/${index}`, message: 'this metric is the primary metric; a secondary metric is another goal' }];
    if (guardrailIds.includes(id))
      return [{ pointer: `/secondary_metric_ids/${index}`, message: 'this metric is a guardrail; a metric is either a goal or a guardrail' }];
    return [];
  });
}

/** The stored columns of a new experiment's goals beside the primary and its correction. */
export function goalColumns(input: { secondary_metric_ids?: string[] | undefined; multiple_testing?: MultipleTestingInput | undefined }) {
  return {
    secondary_metric_ids: JSON.stringify(input.secondary_metric_ids ?? []),
    multiple_testing: JSON.stringify(normalizeMultipleTesting(input.multiple_testing)),
  };
}
