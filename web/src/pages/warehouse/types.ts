// Warehouse sources under the names these pages use (generated from openapi.json, as types.ts).
import type * as Api from '../../api-types.js';

export type DataSource = Api.GetDataSourceResponse;
export type DataSourceTest = Api.TestDataSourceResponse;
export type FactTable = Api.GetFactTableResponse;
export type FactColumn = FactTable['columns'][number];
export type FactTableSummary = Api.SummarizeFactTableResponse;
export type AssignmentSource = Api.GetAssignmentSourceResponse;
export type AssignmentSourceSummary = Api.SummarizeAssignmentSourceResponse;
