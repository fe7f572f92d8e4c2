import { fastifyCookie } from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { requireCsrf } from './authenticate.js';
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from './cookie.js';
import type { SessionsDeps } from './deps.js';
import { lookupSession, signIn, signOut, viewOf } from './service.js';

const SignInInput = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 512, description: 'a server API key (vd_srv_...)' }) },
  { additionalProperties: false },
);

// These routes belong to the admin UI, not to the API: they are left out of openapi.json and
// documented in docs/ui.md. They are public in the sense of the auth hook (no bearer key) and
// do their own cookie handling.
const uiRoute = { config: { auth: 'public' as const } };

export function sessionRoutes(ctx: SessionsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Registered inside this plugin only: the auth hook parses the cookie itself.
    await app.register(fastifyCookie);

    app.post('/ui/session', { ...uiRoute, schema: { hide: true, body: SignInInput } }, async (request, reply) => {
      const { token, view } = await signIn(ctx, request.body.key);
      setSessionCookie(request, reply, token);
      return reply.code(201).header('cache-control', 'no-store').send(view);
    });

    app.get('/ui/session', { ...uiRoute, schema: { hide: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const token = sessionTokenOf(request);
      const found = token ? await lookupSession(ctx, token) : { state: 'none' as const };
      if (found.state !== 'active') {
        // A dead cookie is dropped so the browser stops sending it.
        if (token) clearSessionCookie(request, reply);
        return { signed_in: false, reason: token ? found.state : 'none' };
      }
      return viewOf(ctx, found.session);
    });

    app.delete('/ui/session', { ...uiRoute, schema: { hide: true } }, async (request, reply) => {
      const token = sessionTokenOf(request);
      const found = token ? await lookupSession(ctx, token) : { state: 'none' as const };
      if (found.state !== 'none') {
        // Signing out a live session is a state change like any other: our page only.
        if (found.state === 'active') requireCsrf(request, found.session);
        await signOut(ctx, found.session);
      }
      clearSessionCookie(request, reply);
      return reply.code(204).send(null);
    });
  };
}
