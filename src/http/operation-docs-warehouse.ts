import { PAGED, type OperationDoc } from './operation-doc.js';

// The warehouse sources' operations (docs/warehouse.md), kept beside the rest of OPERATION_DOCS,
// which spreads them in.

export const WAREHOUSE_OPERATION_DOCS: Record<string, OperationDoc> = {
  listDataSources: { summary: 'List data sources', description: `The workspace’s warehouse sources, oldest first, their URLs masked. ${PAGED}` },
  createDataSource: {
    summary: 'Create a data source',
    description:
      'A PostgreSQL (`postgres://`) or ClickHouse (`http(s)://`, or `chdb:PATH` for the embedded engine) that Verdict reads, read-only. The URL is stored encrypted and returned whole only in this answer; everywhere else (and in the audit log) it is masked, without its password or query string. 422 (pointer `/url`) for a URL that is not the kind’s, carries parameters Verdict does not read, or whose host is, or resolves to, a private, loopback or link-local address (allowed with VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1; the embedded engine likewise). Audit-logged.',
  },
  getDataSource: { summary: 'Get a data source', description: 'One source by id, its URL masked; 404 when there is none in the workspace.' },
  updateDataSource: {
    summary: 'Update a data source',
    description:
      'Changes the name or the URL (checked as at creation; the masked URL sent back changes nothing). An unchanged body changes nothing and logs nothing. Audit-logged.',
  },
  deleteDataSource: {
    summary: 'Delete a data source',
    description: 'Deletes the source; 409 while fact tables or assignment sources read it (`referrers` lists them). Audit-logged.',
  },
  testDataSource: {
    summary: 'Test a data source',
    description:
      'Connects (checking the host against the network rule again), asks the server’s version and answers `ok`, `server_version` and, on failure, `error` (never the URL). Audit-logged with the outcome.',
  },
  listFactTables: { summary: 'List fact tables', description: `The workspace’s fact tables, oldest first; \`data_source_id\` keeps one source’s. ${PAGED}` },
  createFactTable: {
    summary: 'Create a fact table',
    description:
      'SQL over a data source returning a unit id column, a timestamp column and numeric or string columns. Verdict refuses (422, pointer `/sql`) anything but one read-only SELECT (a second statement, a write, FOR UPDATE, a function with side effects), then describes the columns on the source without reading rows, in a read-only transaction (PostgreSQL) or with readonly=1 (ClickHouse), bounded by VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS (504 past it). 422 when `unit_id_column` or `timestamp_column` is not among the columns, or the timestamp column is not a timestamp or date; 502 when the source cannot be reached. Audit-logged.',
  },
  getFactTable: { summary: 'Get a fact table', description: 'One fact table by id with its described columns; 404 when there is none in the workspace.' },
  updateFactTable: {
    summary: 'Update a fact table',
    description:
      'Changes the name, the SQL or the unit id and timestamp columns; a changed SQL or column is checked and described again as at creation. An unchanged body logs nothing. Audit-logged.',
  },
  deleteFactTable: { summary: 'Delete a fact table', description: 'Deletes the fact table (nothing in the source changes). Audit-logged.' },
  summarizeFactTable: {
    summary: 'Summarize a fact table',
    description:
      'Rows, distinct units and the first and last timestamp, computed by the source read-only and bounded by the statement timeout (504 past it): only these aggregates leave the source.',
  },
  listAssignmentSources: {
    summary: 'List assignment sources',
    description: `The workspace’s assignment sources, oldest first; \`data_source_id\` keeps one source’s. ${PAGED}`,
  },
  createAssignmentSource: {
    summary: 'Create an assignment source',
    description:
      'SQL over a data source returning one row per exposure of experiments assigned elsewhere: the unit id, the experiment’s key, the variant’s key and the time, in the four columns named. Checked as a fact table’s SQL (422 at `/sql` for anything but one read-only SELECT; described on the source without reading rows, 504 past the statement timeout, 502 when the source cannot be reached); 422 naming the column field when a column is not among those the SQL returns, or the timestamp column is not a timestamp or date. Audit-logged.',
  },
  getAssignmentSource: {
    summary: 'Get an assignment source',
    description: 'One assignment source by id with its described columns; 404 when there is none in the workspace.',
  },
  updateAssignmentSource: {
    summary: 'Update an assignment source',
    description:
      'Changes the name, the SQL or the columns; a changed SQL or column is checked and described again as at creation. An unchanged body logs nothing. Audit-logged.',
  },
  deleteAssignmentSource: {
    summary: 'Delete an assignment source',
    description: 'Deletes it (nothing in the source changes); 409 while experiments read their exposures from it (`referrers` lists them). Audit-logged.',
  },
  summarizeAssignmentSource: {
    summary: 'Summarize an assignment source',
    description:
      'Per experiment key (at most 100, most units first): the units by the variant of their first exposure, those exposed to more than one variant, and the first and last timestamp, computed by the source read-only and bounded by the statement timeout: only these aggregates leave the source.',
  },
};
