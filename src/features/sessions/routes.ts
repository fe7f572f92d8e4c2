import { fastifyCookie } from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { PasswordSignInInput } from '../people/schemas.js';
import { clientAddress } from '../people/throttle.js';
import { requireCsrf } from './authenticate.js';
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from './cookie.js';
import type { SessionsDeps } from './deps.js';
import { lookupAnySession, signIn } from './service.js';

const KeySignInInput = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 512, description: 'a server API key (vd_srv_...)' }) },
  { additionalProperties: false },
);
const SignInInput = Type.Union([PasswordSignInInput, KeySignInInput]);
const SignOutQuery = Type.Object({ everywhere: Type.Optional(Type.Enum(['1', 'true'])) }, { additionalProperties: false });

// These routes belong to the admin UI, not to the API: they are left out of openapi.json and
// documented in docs/ui.md. They are public in the sense of the auth hook (no bearer key) and
// do their own cookie handling.
const uiRoute = { config: { auth: 'public' as const } };

/** What the sign-in page offers: the key fallback unless turned off, single sign-on when configured. */
function signInMethods(ctx: SessionsDeps): { key_sign_in: boolean; sso: boolean } {
  return { key_sign_in: ctx.config.uiKeySignIn, sso: ctx.people.ssoEnabled };
}

export function sessionRoutes(ctx: SessionsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Registered inside this plugin only: the auth hook parses the cookie itself.
    await app.register(fastifyCookie);

    app.post('/ui/session', { ...uiRoute, schema: { hide: true, body: SignInInput } }, async (request, reply) => {
      const body = request.body;
      const { token, view } =
        'key' in body ? await signIn(ctx, body.key) : await ctx.people.signIn(body, clientAddress(request.ip, request.headers['x-forwarded-for']));
      // A session the browser brought (an attacker's planted cookie, or its own older one) is
      // ended: the browser leaves with the fresh token only, so a fixed session id gains nothing.
      const brought = sessionTokenOf(request);
      if (brought) {
        const old = await lookupAnySession(ctx, brought);
        if (old.state !== 'none') await old.signOut(false);
      }
      setSessionCookie(request, reply, token);
      return reply.code(201).header('cache-control', 'no-store').send(view);
    });

    app.get('/ui/session', { ...uiRoute, schema: { hide: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const token = sessionTokenOf(request);
      const found = token ? await lookupAnySession(ctx, token) : { state: 'none' as const };
      if (found.state !== 'active') {
        // A dead cookie is dropped so the browser stops sending it.
        if (token) clearSessionCookie(request, reply);
        return { signed_in: false, reason: token ? found.state : 'none', ...signInMethods(ctx) };
      }
      return found.view();
    });

    // ?everywhere=1 ends every session of the person signed in (a key's session: only this one).
    app.delete('/ui/session', { ...uiRoute, schema: { hide: true, querystring: SignOutQuery } }, async (request, reply) => {
      const token = sessionTokenOf(request);
      const found = token ? await lookupAnySession(ctx, token) : { state: 'none' as const };
      if (found.state !== 'none') {
        // Signing out a live session is a state change like any other: our page only.
        if (found.state === 'active') requireCsrf(request, found.session);
        await found.signOut(request.query.everywhere !== undefined);
      }
      clearSessionCookie(request, reply);
      return reply.code(204).send(null);
    });
  };
}
