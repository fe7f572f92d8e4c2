import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { AnalysisDeps } from './deps.js';
import Type from 'typebox';
import { AnalysisSummaryHistorySchema } from './history-summary.js';
import { AnalysisSnapshotHistorySchema, AnalysisSnapshotSchema, ComputeQuery, HistoryQuery, ResultsParams } from './schemas.js';
import { computeForCaller, latestResults, resultsHistory } from './service.js';

const route = routeOptionsFor('analysis');
const notFound = problemDoc('no such experiment in this workspace');

/** Results of the background analysis: latest snapshot, history, and compute-now. */
export function analysisRoutes(ctx: AnalysisDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/experiments/:id/results',
      route('getExperimentResults', {
        description:
          'The latest analysis snapshot. Reading it through the admin UI session logs a peek (audit action experiment.results_peeked); reading it with an API key does not.',
        params: ResultsParams,
        response: { 200: AnalysisSnapshotSchema, 404: problemDoc('no such experiment, or no snapshot computed yet') },
      }),
      async (request) => latestResults(ctx, principalOf(request), request.params.id),
    );
    app.get(
      '/v1/experiments/:id/results/history',
      route('getExperimentResultsHistory', {
        description:
          'Every snapshot of the experiment, oldest first, for charting how the credible intervals tighten. With fields=summary, a compact series: per snapshot the recommendation and each variant’s primary-metric relative effect and sample size.',
        params: ResultsParams,
        querystring: HistoryQuery,
        response: {
          200: Type.Union([AnalysisSnapshotHistorySchema, AnalysisSummaryHistorySchema], { description: 'full snapshots, or summaries with fields=summary' }),
          404: notFound,
        },
      }),
      async (request, reply) => {
        const history = await resultsHistory(ctx, principalOf(request).workspaceId, request.params.id, request.query);
        // Serialized by the branch it is, not the union: matching a union tries each branch on the
        // whole page (about a quarter more time on a full history of 168 snapshots).
        const schema = (request.query.fields === 'summary' ? AnalysisSummaryHistorySchema : AnalysisSnapshotHistorySchema) as unknown as Record<
          string,
          unknown
        >;
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(schema, '200')).send(history);
      },
    );
    app.post(
      '/v1/experiments/:id/results/compute',
      route('computeExperimentResults', {
        description:
          'Computes and stores a snapshot now, beside the cadence-driven background analysis. Audit-logged (experiment.results_computed). ' +
          'mode=incremental (the default) refreshes the experiment’s per-unit rollups with what is new and aggregates them; mode=full computes from all raw events and leaves the rollups alone (the same numbers: an operator’s check).',
        params: ResultsParams,
        querystring: ComputeQuery,
        response: { 201: AnalysisSnapshotSchema, 404: notFound, 409: problemDoc('the experiment has not started') },
      }),
      async (request, reply) => reply.code(201).send(await computeForCaller(ctx, principalOf(request), request.params.id, request.query.mode)),
    );
  };
}
