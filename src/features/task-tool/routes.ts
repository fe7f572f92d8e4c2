import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { acceptRawBodies, rawBodyOf, rawBodyValidatorCompiler } from '../inbound/raw-body.js';
import { receiveTaskToolCallback } from './callback.js';
import type { TaskToolDeps } from './deps.js';
import {
  RotatedWebhookSecret,
  TaskToolCallbackAck,
  TaskToolCallbackBody,
  TaskToolCallbackHeaders,
  TaskToolCallbackParams,
  TaskToolSettingsInput,
  TaskToolSettingsSchema,
} from './schemas.js';
import { getTaskToolSettings, putTaskToolSettings, rotateWorkspaceWebhookSecret } from './service.js';

const route = routeOptionsFor('task-tool');

export function taskToolRoutes(ctx: TaskToolDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(settingsRoutes(ctx));
    await app.register(callbackRoutes(ctx));
  };
}

/** GET/PUT /v1/task-tool/settings and the rotation of the workspace webhook secret (server keys). */
function settingsRoutes(ctx: TaskToolDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/task-tool/settings', route('getTaskToolSettings', { response: { 200: TaskToolSettingsSchema } }), async (request) =>
      getTaskToolSettings(ctx, principalOf(request).workspaceId),
    );

    app.put(
      '/v1/task-tool/settings',
      route('putTaskToolSettings', {
        description: 'Replaces the status mapping. Task-tool status names are matched case-insensitively.',
        body: TaskToolSettingsInput,
        response: { 200: TaskToolSettingsSchema },
      }),
      async (request) => {
        const principal = principalOf(request);
        return putTaskToolSettings(ctx, principal.workspaceId, principal.keyId, request.body);
      },
    );

    app.post(
      '/v1/task-tool/settings/rotate-secret',
      route('rotateWorkspaceWebhookSecret', {
        description: 'Issues a new workspace webhook secret (returned once); the previous one keeps verifying for 24 hours.',
        response: { 200: RotatedWebhookSecret },
      }),
      async (request) => {
        const principal = principalOf(request);
        return rotateWorkspaceWebhookSecret(ctx, principal.workspaceId, principal.keyId);
      },
    );
  };
}

/** POST /webhooks/task-tool/{workspace_id}: public, authenticated by X-Signature over the raw bytes. */
function callbackRoutes(ctx: TaskToolDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    acceptRawBodies(app);
    app.post(
      '/webhooks/task-tool/:workspace_id',
      {
        ...route(
          'receiveTaskToolCallback',
          {
            description:
              'ClickUp-shaped callback (taskStatusUpdated, taskUpdated, taskDeleted). Answers 200 once the MirrorTaskStatusJob is ' +
              'durably enqueued; other event types are acknowledged with `ignored: true`. See docs/webhooks.md.',
            params: TaskToolCallbackParams,
            headers: TaskToolCallbackHeaders,
            body: TaskToolCallbackBody,
            response: {
              200: TaskToolCallbackAck,
              400: problemDoc('the body is not JSON'),
              401: problemDoc('X-Signature missing, malformed or not matching; `detail` says which'),
              404: problemDoc('unknown workspace'),
              422: problemDoc('not a task-tool callback (event and task_id are required; history_items an array of items with an id)'),
            },
          },
          'public',
        ),
        validatorCompiler: rawBodyValidatorCompiler,
      },
      async (request) =>
        receiveTaskToolCallback(ctx, { workspaceId: request.params.workspace_id, signature: request.headers['x-signature'], rawBody: rawBodyOf(request) }),
    );
  };
}
