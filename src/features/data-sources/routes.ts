import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import { assignmentSourceRoutes } from '../assignment-sources/routes.js';
import type { DataSourcesDeps } from './deps.js';
import { createFactTable, getFactTable, patchFactTable, removeFactTable, summarizeFactTable } from './fact-tables.js';
import {
  DataSourceInput,
  DataSourceList,
  DataSourceListQuery,
  DataSourceParams,
  DataSourcePatch,
  DataSourceSchema,
  DataSourceTestResult,
  DataSourceWritten,
  FactTableInput,
  FactTableList,
  FactTableListQuery,
  FactTableParams,
  FactTablePatch,
  FactTableSchema,
  FactTableSummary,
} from './schemas.js';
import { createDataSource, getDataSource, patchDataSource, removeDataSource, testDataSource } from './service.js';
import { listDataSources, listFactTables } from './store.js';

const route = routeOptionsFor('warehouse');
const sourceNotFound = problemDoc('no such data source in this workspace');
const tableNotFound = problemDoc('no such fact table in this workspace');
const unreachable = problemDoc('the source could not be reached: refused by the network rule, no connection, or its credentials were refused');
const timedOut = problemDoc('the query ran past VERDICT_DATA_SOURCE_STATEMENT_TIMEOUT_MS and was stopped');

function dataSourceRoutes(ctx: DataSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/data-sources', route('listDataSources', { querystring: DataSourceListQuery, response: { 200: DataSourceList } }), async (request) =>
      listDataSources(ctx.db, principalOf(request).workspaceId, request.query),
    );
    app.post('/v1/data-sources', route('createDataSource', { body: DataSourceInput, response: { 201: DataSourceWritten } }), async (request, reply) =>
      reply.code(201).send(await createDataSource(ctx, actorOf(request), request.body)),
    );
    app.get(
      '/v1/data-sources/:id',
      route('getDataSource', { params: DataSourceParams, response: { 200: DataSourceSchema, 404: sourceNotFound } }),
      async (request) => getDataSource(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/data-sources/:id',
      route('updateDataSource', { params: DataSourceParams, body: DataSourcePatch, response: { 200: DataSourceWritten, 404: sourceNotFound } }),
      async (request) => patchDataSource(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/data-sources/:id',
      route('deleteDataSource', {
        params: DataSourceParams,
        response: { 204: EmptyBody, 404: sourceNotFound, 409: problemDoc('fact tables or assignment sources still read the source (`referrers` lists them)') },
      }),
      async (request, reply) => {
        await removeDataSource(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/data-sources/:id/test',
      route('testDataSource', { params: DataSourceParams, response: { 200: DataSourceTestResult, 404: sourceNotFound } }),
      async (request) => testDataSource(ctx, actorOf(request), request.params.id),
    );
  };
}

function factTableRoutes(ctx: DataSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/fact-tables', route('listFactTables', { querystring: FactTableListQuery, response: { 200: FactTableList } }), async (request) => {
      const { data_source_id, ...page } = request.query;
      return listFactTables(ctx.db, principalOf(request).workspaceId, data_source_id, page);
    });
    app.post(
      '/v1/fact-tables',
      route('createFactTable', { body: FactTableInput, response: { 201: FactTableSchema, 502: unreachable, 504: timedOut } }),
      async (request, reply) => reply.code(201).send(await createFactTable(ctx, actorOf(request), request.body)),
    );
    app.get(
      '/v1/fact-tables/:id',
      route('getFactTable', { params: FactTableParams, response: { 200: FactTableSchema, 404: tableNotFound } }),
      async (request) => getFactTable(ctx, principalOf(request).workspaceId, request.params.id),
    );
    app.patch(
      '/v1/fact-tables/:id',
      route('updateFactTable', {
        params: FactTableParams,
        body: FactTablePatch,
        response: { 200: FactTableSchema, 404: tableNotFound, 502: unreachable, 504: timedOut },
      }),
      async (request) => patchFactTable(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/fact-tables/:id',
      route('deleteFactTable', { params: FactTableParams, response: { 204: EmptyBody, 404: tableNotFound } }),
      async (request, reply) => {
        await removeFactTable(ctx, actorOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/fact-tables/:id/summary',
      route('summarizeFactTable', { params: FactTableParams, response: { 200: FactTableSummary, 404: tableNotFound, 502: unreachable, 504: timedOut } }),
      async (request) => summarizeFactTable(ctx, principalOf(request).workspaceId, request.params.id),
    );
  };
}

export function warehouseRoutes(ctx: DataSourcesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(dataSourceRoutes(ctx));
    await app.register(factTableRoutes(ctx));
    await app.register(assignmentSourceRoutes(ctx));
  };
}
