import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import { viaHttps } from '../sessions/cookie.js';
import { acceptLink } from './accept.js';
import type { PeopleDeps } from './deps.js';
import { baseUrlOf } from './links.js';
import {
  AcceptedUser,
  AcceptInvitation,
  AcceptPasswordReset,
  Invitation,
  LinkParams,
  PasswordReset,
  SessionsEnded,
  UserInput,
  UserList,
  UserParams,
  UserPatch,
  UserSchema,
} from './schemas.js';
import { endSessionsOf, inviteUser, issuePasswordReset, listWorkspaceUsers, patchUser } from './users.js';

const route = routeOptionsFor('users');
const notFound = problemDoc('no such user in this workspace');
const linkGone = problemDoc('the link was used, replaced or has expired');

/** Links point at VERDICT_PUBLIC_URL, else at the origin this request reached. */
export function baseUrlFor(ctx: Pick<PeopleDeps, 'config'>, request: FastifyRequest): string {
  return baseUrlOf(ctx.config.publicUrl, `${viaHttps(request) ? 'https' : 'http'}://${request.host}`);
}

export function peopleRoutes(ctx: PeopleDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(userAdminRoutes(ctx));
    await app.register(linkRoutes(ctx));
  };
}

/** The admins' routes: list, invite, change role or disable, issue a reset link, sign out everywhere. */
function userAdminRoutes(ctx: PeopleDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/users', route('listUsers', { response: { 200: UserList } }), async (request) => listWorkspaceUsers(ctx, principalOf(request).workspaceId));

    app.post(
      '/v1/users',
      route('inviteUser', { body: UserInput, response: { 201: Invitation, 409: problemDoc('the address has an account here') } }),
      async (request, reply) => {
        const principal = principalOf(request);
        const invited = await inviteUser(ctx, principal.workspaceId, principal.keyId, request.body, baseUrlFor(ctx, request));
        return reply.code(201).header('cache-control', 'no-store').send(invited);
      },
    );

    app.patch(
      '/v1/users/:id',
      route('updateUser', {
        params: UserParams,
        body: UserPatch,
        response: { 200: UserSchema, 404: notFound, 409: problemDoc('would leave no active admin') },
      }),
      async (request) => {
        const principal = principalOf(request);
        return patchUser(ctx, principal.workspaceId, principal.keyId, request.params.id, request.body);
      },
    );

    app.post(
      '/v1/users/:id/password-reset',
      route('issuePasswordReset', { params: UserParams, response: { 201: PasswordReset, 404: notFound, 409: problemDoc('the account is disabled') } }),
      async (request, reply) => {
        const principal = principalOf(request);
        const issued = await issuePasswordReset(ctx, principal.workspaceId, principal.keyId, request.params.id, baseUrlFor(ctx, request));
        return reply.code(201).header('cache-control', 'no-store').send(issued);
      },
    );

    app.post('/v1/users/:id/sign-out', route('signOutUser', { params: UserParams, response: { 200: SessionsEnded, 404: notFound } }), async (request) => {
      const principal = principalOf(request);
      return { sessions_ended: await endSessionsOf(ctx, principal.workspaceId, principal.keyId, request.params.id) };
    });
  };
}

/** The one-time links: public, the token in the path is the credential. */
function linkRoutes(ctx: PeopleDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/invitations/:token/accept',
      route(
        'acceptInvitation',
        { params: LinkParams, body: AcceptInvitation, response: { 200: AcceptedUser, 404: problemDoc('no such invitation'), 410: linkGone } },
        'public',
      ),
      async (request) => ({ user: await acceptLink(ctx, request.params.token, 'invitation', request.body) }),
    );

    app.post(
      '/v1/password-resets/:token/accept',
      route(
        'acceptPasswordReset',
        { params: LinkParams, body: AcceptPasswordReset, response: { 200: AcceptedUser, 404: problemDoc('no such reset link'), 410: linkGone } },
        'public',
      ),
      async (request) => ({ user: await acceptLink(ctx, request.params.token, 'password_reset', request.body) }),
    );
  };
}
