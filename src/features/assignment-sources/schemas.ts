import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';
import { FactColumnSchema } from '../data-sources/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Sql = Type.String({
  minLength: 1,
  maxLength: 20_000,
  description: 'one read-only SELECT (or WITH ... SELECT) in the source’s dialect, one row per exposure',
});
const ColumnName = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

const columnFields = {
  unit_id_column: ColumnName('the column holding the unit id'),
  experiment_key_column: ColumnName('the column holding the experiment’s key'),
  variant_key_column: ColumnName('the column holding the variant’s key'),
  timestamp_column: ColumnName('the column holding when the unit was exposed (a timestamp or date)'),
};

export const AssignmentSourceSchema = Type.Object(
  {
    id: Id,
    workspace_id: Id,
    data_source_id: Id,
    name: Type.String(),
    sql: Type.String(),
    ...columnFields,
    columns: Type.Array(FactColumnSchema, { description: 'what the source said the SQL returns, when it was last saved' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    description:
      'SQL over a data source naming who was exposed to which variant of which experiment, and when: the exposures of experiments assigned elsewhere',
  },
);
export type AssignmentSource = Static<typeof AssignmentSourceSchema>;

export const AssignmentSourceInput = Type.Object(
  { data_source_id: Type.String({ maxLength: 64 }), name: Name, sql: Sql, ...columnFields },
  { additionalProperties: false },
);
export type AssignmentSourceInput = Static<typeof AssignmentSourceInput>;

export const AssignmentSourcePatch = Type.Object(
  {
    name: Type.Optional(Name),
    sql: Type.Optional(Sql),
    unit_id_column: Type.Optional(columnFields.unit_id_column),
    experiment_key_column: Type.Optional(columnFields.experiment_key_column),
    variant_key_column: Type.Optional(columnFields.variant_key_column),
    timestamp_column: Type.Optional(columnFields.timestamp_column),
  },
  { additionalProperties: false },
);
export type AssignmentSourcePatch = Static<typeof AssignmentSourcePatch>;

export const AssignmentSourceParams = Type.Object({ id: Type.String() });
export const AssignmentSourceList = ListOf(AssignmentSourceSchema, 'assignment sources of the workspace, oldest first');
export const AssignmentSourceListQuery = Type.Object(
  { ...PageQuery, data_source_id: Type.Optional(Type.String({ maxLength: 64, description: 'only the assignment sources of this data source' })) },
  { additionalProperties: false },
);

const ExperimentInSource = Type.Object({
  experiment_key: Type.String({ description: 'the key as the source writes it' }),
  units: Type.Integer({ description: 'distinct units exposed' }),
  variants: Type.Array(Type.Object({ variant_key: Type.String(), units: Type.Integer({ description: 'units whose first exposure is in this variant' }) })),
  units_in_several_variants: Type.Integer({ description: 'units exposed to more than one variant: each counts in the variant of its first exposure' }),
  first_timestamp: Type.Union([Type.String(), Type.Null()]),
  last_timestamp: Type.Union([Type.String(), Type.Null()]),
});

export const AssignmentSourceSummary = Type.Object(
  {
    experiments: Type.Array(ExperimentInSource, { description: 'per experiment key (at most 100, most units first)' }),
    duration_ms: Type.Integer(),
  },
  { description: 'Aggregates of the assignment source, computed by the source (no row leaves it)' },
);
export type AssignmentSourceSummary = Static<typeof AssignmentSourceSummary>;
