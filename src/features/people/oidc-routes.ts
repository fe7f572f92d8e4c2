import { fastifyCookie } from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { AppContext } from '../../context.js';
import { setSessionCookie, viaHttps } from '../sessions/cookie.js';
import type { PeopleDeps } from './deps.js';
import { FLOW_TTL_MS, OidcClient } from './oidc.js';
import { baseUrlFor } from './routes.js';
import { signInWithClaims } from './sso.js';

const FLOW_COOKIE = 'verdict_oidc';
const FLOW_PATH = '/ui/oidc';
const uiRoute = { config: { auth: 'public' as const } };
const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 1024 })),
  iss: Type.Optional(Type.String({ maxLength: 1024 })),
  session_state: Type.Optional(Type.String({ maxLength: 1024 })),
  scope: Type.Optional(Type.String({ maxLength: 1024 })),
});

export type OidcDeps = PeopleDeps & Pick<AppContext, 'secrets'>;

/**
 * GET /ui/oidc/start and /ui/oidc/callback (the admin UI's, documented in docs/ui.md and
 * docs/deployment.md). The flow cookie is SameSite=Lax, unlike the session's Strict: the provider
 * sends the browser back by a cross-site top-level navigation, which Strict would strip.
 */
export function oidcRoutes(ctx: OidcDeps, client: OidcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyCookie);
    const redirectUri = (request: Parameters<typeof baseUrlFor>[1]) => `${baseUrlFor(ctx, request)}${FLOW_PATH}/callback`;

    app.get(`${FLOW_PATH}/start`, { ...uiRoute, schema: { hide: true } }, async (request, reply) => {
      const { location, sealed } = await client.start(ctx.secrets, redirectUri(request), ctx.clock.now());
      reply.setCookie(FLOW_COOKIE, sealed, { path: FLOW_PATH, httpOnly: true, sameSite: 'lax', secure: viaHttps(request), maxAge: FLOW_TTL_MS / 1000 });
      return reply.header('cache-control', 'no-store').redirect(location, 302);
    });

    app.get(`${FLOW_PATH}/callback`, { ...uiRoute, schema: { hide: true, querystring: CallbackQuery } }, async (request, reply) => {
      reply.header('cache-control', 'no-store').clearCookie(FLOW_COOKIE, { path: FLOW_PATH });
      const claims = await client.finish(ctx.secrets, request.cookies[FLOW_COOKIE], request.query, redirectUri(request), ctx.clock.now());
      const { token } = await signInWithClaims(ctx, client.config, claims);
      setSessionCookie(request, reply, token);
      return reply.redirect('/ui/', 302);
    });
  };
}
