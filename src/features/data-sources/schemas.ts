import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Kind = Type.Union([Type.Literal('postgres'), Type.Literal('clickhouse')], {
  description: 'postgres: a PostgreSQL server (postgres://); clickhouse: a ClickHouse server (http(s)://) or the embedded engine (chdb:PATH)',
});
const Url = Type.String({
  minLength: 5,
  maxLength: 2048,
  description:
    'postgres://user:password@host:5432/database[?sslmode=...] or http(s)://user:password@host:8123/database (ClickHouse), or chdb:PATH; stored encrypted, shown whole only in the answer to the request that sent it',
});

const dataSourceProperties = {
  id: Id,
  workspace_id: Id,
  name: Type.String(),
  kind: Kind,
  url: Type.String({ description: 'masked: scheme, user, host, port and database; never the password or the query string' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const DataSourceSchema = Type.Object(dataSourceProperties, { description: 'A team’s own PostgreSQL or ClickHouse that Verdict reads, read-only' });
export type DataSource = Static<typeof DataSourceSchema>;

export const DataSourceWritten = Type.Object(
  { ...dataSourceProperties, url: Type.String({ description: 'at creation, or when a PATCH changed it, the URL as sent; masked otherwise' }) },
  { description: 'The data source as saved' },
);

export const DataSourceInput = Type.Object({ name: Name, kind: Kind, url: Url }, { additionalProperties: false });
export type DataSourceInput = Static<typeof DataSourceInput>;

export const DataSourcePatch = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Type.String({ ...Url, description: 'a new URL of the same kind; the masked URL sent back changes nothing' })),
  },
  { additionalProperties: false },
);
export type DataSourcePatch = Static<typeof DataSourcePatch>;

export const DataSourceParams = Type.Object({ id: Type.String() });
export const DataSourceList = ListOf(DataSourceSchema, 'data sources of the workspace, oldest first');
export const DataSourceListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const DataSourceTestResult = Type.Object(
  {
    ok: Type.Boolean({ description: 'whether Verdict connected and the source answered' }),
    server_version: Type.Union([Type.String(), Type.Null()], { description: 'what the source says its version is; null when it did not answer' }),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why it failed (refused by the network rule, no connection, credentials), never the URL' }),
  },
  { description: 'The answer of a connection test' },
);
export type DataSourceTestResult = Static<typeof DataSourceTestResult>;

const ColumnKind = Type.Union([Type.Literal('number'), Type.Literal('string'), Type.Literal('timestamp'), Type.Literal('boolean'), Type.Literal('other')]);
export const FactColumnSchema = Type.Object({
  name: Type.String(),
  type: Type.String({ description: 'the source’s own type name' }),
  kind: ColumnKind,
});
export type FactColumn = Static<typeof FactColumnSchema>;

const Sql = Type.String({ minLength: 1, maxLength: 20_000, description: 'one read-only SELECT (or WITH ... SELECT) in the source’s dialect' });
const ColumnName = Type.String({ minLength: 1, maxLength: 200 });
const RestatementHours = Type.Integer({
  minimum: 0,
  maximum: 8760,
  description:
    'hours before the last refresh’s cutoff that each incremental refresh reads again, so rows arriving late with a timestamp inside them still count (docs/warehouse.md "Incremental refresh"); default 48',
});

const factTableProperties = {
  id: Id,
  workspace_id: Id,
  data_source_id: Id,
  name: Type.String(),
  sql: Type.String(),
  unit_id_column: Type.String(),
  timestamp_column: Type.String(),
  restatement_hours: RestatementHours,
  columns: Type.Array(FactColumnSchema, { description: 'what the source said the SQL returns, when it was last saved' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const FactTableSchema = Type.Object(factTableProperties, {
  description: 'SQL over a data source: a unit id, a timestamp, and numeric or string columns',
});
export type FactTable = Static<typeof FactTableSchema>;

export const FactTableInput = Type.Object(
  {
    data_source_id: Type.String({ maxLength: 64 }),
    name: Name,
    sql: Sql,
    unit_id_column: ColumnName,
    timestamp_column: ColumnName,
    restatement_hours: Type.Optional(RestatementHours),
  },
  { additionalProperties: false },
);
export type FactTableInput = Static<typeof FactTableInput>;

export const FactTablePatch = Type.Object(
  {
    name: Type.Optional(Name),
    sql: Type.Optional(Sql),
    unit_id_column: Type.Optional(ColumnName),
    timestamp_column: Type.Optional(ColumnName),
    restatement_hours: Type.Optional(RestatementHours),
  },
  { additionalProperties: false },
);
export type FactTablePatch = Static<typeof FactTablePatch>;

export const FactTableParams = Type.Object({ id: Type.String() });
export const FactTableList = ListOf(FactTableSchema, 'fact tables of the workspace, oldest first');
export const FactTableListQuery = Type.Object(
  { ...PageQuery, data_source_id: Type.Optional(Type.String({ maxLength: 64, description: 'only the fact tables of this source' })) },
  { additionalProperties: false },
);

export const FactTableSummary = Type.Object(
  {
    rows: Type.Integer({ description: 'rows the SQL returns now' }),
    units: Type.Integer({ description: 'distinct unit ids among them' }),
    first_timestamp: Type.Union([Type.String(), Type.Null()], { description: 'the earliest timestamp, as the source writes it' }),
    last_timestamp: Type.Union([Type.String(), Type.Null()], { description: 'the latest timestamp, as the source writes it' }),
    duration_ms: Type.Integer(),
  },
  { description: 'Aggregates of the fact table, computed by the source (no row leaves it)' },
);
export type FactTableSummary = Static<typeof FactTableSummary>;
