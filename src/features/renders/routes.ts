import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { CONTENT_TYPES } from './document.js';
import type { RendersDeps } from './deps.js';
import { OutputParams, RenderInput, RenderList, RenderListQuery, RenderParams, RenderSchema } from './schemas.js';
import { createRender, getOutput, getRender, listRenders } from './service.js';

const route = routeOptionsFor('renders');
const binary = { schema: { type: 'string', format: 'binary' } };

/**
 * A rendered document is content written by template authors and filled with client data, served
 * from the API's (and the admin UI's) origin: opened in a browser it must stay inert. `sandbox`
 * gives it an opaque origin with scripts, forms and popups off (so nothing in it can read the
 * admin session or act as the user); nothing loads but its inline style and images.
 */
const INERT_DOCUMENT_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: http:; base-uri 'none'; form-action 'none'";

export function renderRoutes(ctx: RendersDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(submitAndListRoutes(ctx));
    await app.register(readRoutes(ctx));
  };
}

function submitAndListRoutes(ctx: RendersDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/renders',
      route('createRender', {
        description:
          'Queues a render of a pinned version (default: the latest) and answers 202; poll GET /v1/renders/{id}. ' +
          '404: unknown template or label. 422: no frozen version yet (type about:blank, title Unprocessable), or data that does not satisfy the fields schema (pointers under /data).',
        body: RenderInput,
        response: { 202: RenderSchema, 404: problemDoc('no such template in this workspace, or no such version label') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        const render = await createRender(ctx, principal.workspaceId, principal.keyId, request.body);
        return reply.code(202).header('location', `/v1/renders/${render.id}`).send(render);
      },
    );

    app.get(
      '/v1/renders',
      route('listRenders', {
        description: 'The workspace’s renders, newest first, optionally of one template or in one status; keyset-paged with next_cursor.',
        querystring: RenderListQuery,
        response: { 200: RenderList },
      }),
      async (request) => listRenders(ctx, principalOf(request).workspaceId, request.query),
    );
  };
}

function readRoutes(ctx: RendersDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/renders/:id',
      route('getRender', { params: RenderParams, response: { 200: RenderSchema, 404: problemDoc('no such render in this workspace') } }),
      async (request) => getRender(ctx, principalOf(request).workspaceId, request.params.id),
    );

    app.get(
      '/v1/renders/:id/outputs/:format',
      route('getRenderOutput', {
        description: 'The bytes of one output, with its content type.',
        params: OutputParams,
        response: {
          200: { description: 'the output', content: Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type, binary])) },
          404: problemDoc('no such render, or the render did not ask for this format'),
          409: problemDoc('the render is still queued or running (Retry-After), or it failed'),
        },
      }),
      async (request, reply) => {
        const output = await getOutput(ctx, principalOf(request).workspaceId, request.params.id, request.params.format);
        if (request.params.format === 'html') reply.header('content-security-policy', INERT_DOCUMENT_POLICY);
        return reply
          .header('content-type', output.contentType)
          .header('x-content-type-options', 'nosniff')
          .header('content-disposition', `inline; filename="render-${request.params.id}.${extension(request.params.format)}"`)
          .header('cache-control', 'private, max-age=86400, immutable')
          .send(output.content);
      },
    );
  };
}

function extension(format: string): string {
  return format === 'markdown' ? 'md' : format === 'text' ? 'txt' : format;
}
