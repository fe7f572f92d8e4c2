import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import type { Principal } from '../api-keys/authenticator.js';
import type { Assigner } from '../assignment/assigner.js';
import type { ExperimentDefinition } from '../assignment/definitions.js';
import { CONTEXT_LIMIT_BYTES, type Assignment } from '../assignment/schemas.js';
import { characterCount, UNIT_ID_MAX_CHARACTERS } from '../assignment/unit-id.js';
import { listRunningExperimentKeys } from '../experiments/read.js';
import type { OfrepDeps } from './deps.js';

const route = routeOptionsFor('ofrep', 'client');

/**
 * OpenFeature Remote Evaluation Protocol: an experiment is a flag (flag key = experiment key),
 * the evaluation context's targetingKey is the unit id, and the value is the variant key. The
 * same sticky assignment as /v1/assign answers, so any OFREP provider is a Verdict client.
 */
const EvaluationRequest = Type.Object(
  { context: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { additionalProperties: true, description: 'OFREP evaluation request: context.targetingKey is the unit id; other keys are audience attributes' },
);

const EvaluationSuccess = Type.Object({
  key: Type.String(),
  value: Type.String({ description: 'the variant key (the control for units outside the experiment)' }),
  reason: Type.Enum(['SPLIT', 'TARGETING_MATCH', 'DEFAULT', 'STATIC'], {
    description: 'SPLIT: bucketed or held out by a holdout; TARGETING_MATCH: a QA override; DEFAULT: outside the experiment; STATIC: a launched variant',
  }),
  variant: Type.Optional(Type.String()),
  metadata: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()])),
});
const EvaluationFailure = Type.Object({
  key: Type.Optional(Type.String()),
  errorCode: Type.Enum(['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL', 'FLAG_NOT_FOUND']),
  errorDetails: Type.Optional(Type.String()),
});

type Failure = { status: 400; body: { errorCode: 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT'; errorDetails: string } };

function readContext(body: { context?: Record<string, unknown> } | undefined): { unitId: string; attributes: Record<string, unknown> } | Failure {
  const context = body?.context ?? {};
  const { targetingKey, ...attributes } = context;
  if (typeof targetingKey !== 'string' || targetingKey.length === 0) {
    return { status: 400, body: { errorCode: 'TARGETING_KEY_MISSING', errorDetails: 'context.targetingKey (the unit id) is required' } };
  }
  if (characterCount(targetingKey) > UNIT_ID_MAX_CHARACTERS) {
    return { status: 400, body: { errorCode: 'INVALID_CONTEXT', errorDetails: `targetingKey must be at most ${UNIT_ID_MAX_CHARACTERS} characters` } };
  }
  if (Buffer.byteLength(JSON.stringify(attributes)) > CONTEXT_LIMIT_BYTES) {
    return { status: 400, body: { errorCode: 'INVALID_CONTEXT', errorDetails: `the context must be at most ${CONTEXT_LIMIT_BYTES} bytes of JSON` } };
  }
  return { unitId: targetingKey, attributes };
}

/** The OpenFeature reason of an assignment with a variant (a launch is a static value). */
const OFREP_REASONS: Partial<Record<Assignment['reason'], 'TARGETING_MATCH' | 'STATIC'>> = { forced: 'TARGETING_MATCH', launched: 'STATIC' };

function toEvaluation(definition: ExperimentDefinition, assignment: Assignment) {
  const control = definition.variants.find((v) => v.is_control)?.key ?? definition.variants[0]?.key ?? '';
  const metadata = {
    verdict_reason: assignment.reason,
    in_experiment: assignment.variant !== null,
    ...(assignment.holdout_id === undefined ? {} : { holdout_id: assignment.holdout_id }),
  };
  if (assignment.variant === null) return { key: definition.key, value: control, reason: 'DEFAULT' as const, metadata };
  const reason: 'SPLIT' | 'TARGETING_MATCH' | 'STATIC' = OFREP_REASONS[assignment.reason] ?? 'SPLIT';
  return { key: definition.key, value: assignment.variant, variant: assignment.variant, reason, metadata };
}

/** The evaluations of the flags the key may assign in, in the given order; the others are left out. */
async function evaluate(assigner: Assigner, principal: Principal, keys: readonly string[], unitId: string, attributes: Record<string, unknown>) {
  const { assigned } = await assigner.assignMany(principal, keys, { unit_id: unitId, context: attributes });
  return assigned.map(({ definition, assignment }) => toEvaluation(definition, assignment));
}

export function ofrepRoutes({ db, assigner }: OfrepDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/ofrep/v1/evaluate/flags/:key',
      route('ofrepEvaluateFlag', {
        params: Type.Object({ key: Type.String() }),
        body: Type.Optional(EvaluationRequest),
        response: { 200: EvaluationSuccess, 400: EvaluationFailure, 404: EvaluationFailure },
      }),
      async (request, reply) => {
        const { key } = request.params;
        const read = readContext(request.body);
        if ('status' in read) return reply.code(400).send({ key, ...read.body });
        const [evaluation] = await evaluate(assigner, principalOf(request), [key], read.unitId, read.attributes);
        if (!evaluation) return reply.code(404).send({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `no running experiment with key "${key}"` });
        return evaluation;
      },
    );

    app.post(
      '/ofrep/v1/evaluate/flags',
      route('ofrepEvaluateAllFlags', {
        description: 'Evaluates every running (or launched) experiment visible to the key for the targetingKey.',
        body: Type.Optional(EvaluationRequest),
        response: { 200: Type.Object({ flags: Type.Array(EvaluationSuccess) }), 400: EvaluationFailure },
      }),
      async (request, reply) => {
        const read = readContext(request.body);
        if ('status' in read) return reply.code(400).send(read.body);
        const principal = principalOf(request);
        const keys = await listRunningExperimentKeys(db, principal.workspaceId, principal.environmentId);
        return { flags: await evaluate(assigner, principal, keys, read.unitId, read.attributes) };
      },
    );
  };
}
