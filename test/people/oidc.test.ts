import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OidcConfig } from '../../src/config.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { startOidcProvider, type TokenFault } from '../support/oidc-provider.js';
import type { TestServer } from '../support/server.js';

const provider = await startOidcProvider();
afterAll(() => provider.close());

const oidc: OidcConfig = {
  issuer: provider.issuer,
  clientId: provider.clientId,
  clientSecret: provider.clientSecret,
  workspaceId: 'set once the workspace exists',
  roleClaim: 'groups',
  roleValues: { viewer: ['viewer'], editor: ['editor', 'eng'], admin: ['admin', 'verdict-admins'] },
  defaultRole: 'viewer',
};

/** The browser's round trip: start, the provider's approval, the callback with the flow cookie. */
async function ssoSignIn(server: TestServer, claims: Record<string, unknown>, fault: TokenFault = 'none', tamper?: (callback: URL) => void) {
  provider.next = { claims, fault };
  const start = await fetch(`${server.url}/ui/oidc/start`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get('location') ?? '');
  expect(authorize.origin).toBe(provider.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  const flowCookie = /verdict_oidc=[^;]+/.exec(start.headers.get('set-cookie') ?? '')?.[0] ?? '';
  expect(start.headers.get('set-cookie')).toMatch(/HttpOnly/);
  const approved = await fetch(authorize, { redirect: 'manual' });
  const callback = new URL(approved.headers.get('location') ?? '');
  tamper?.(callback);
  const answer = await fetch(callback, { redirect: 'manual', headers: { cookie: flowCookie } });
  const session = /verdict_session=([^;]+)/.exec(answer.headers.get('set-cookie') ?? '')?.[1] ?? null;
  const text = await answer.text();
  return { status: answer.status, location: answer.headers.get('location'), session, text };
}

describeEachDialect(
  'people: single sign-on with OpenID Connect',
  (server) => {
    let key: string;

    beforeAll(async () => {
      const boot = await server().bootstrap('SSO Co');
      key = boot.key;
      (server().ctx.config.oidc as OidcConfig).workspaceId = boot.workspaceId;
    });

    it('signs a person in: code flow with PKCE, a just-in-time account with the role the claim maps to', async () => {
      const claims = { sub: 'sso-ada', email: 'Ada@Example.com', email_verified: true, name: 'Ada SSO', groups: ['staff', 'eng'] };
      const signedIn = await ssoSignIn(server(), claims);
      expect(signedIn.status).toBe(302);
      expect(signedIn.location).toBe('/ui/');
      expect(signedIn.session).not.toBeNull();
      const who = await server().request('GET', '/ui/session', { headers: { cookie: `verdict_session=${signedIn.session}` } });
      expect(who.body).toMatchObject({ signed_in: true, role: 'editor', user: { email: 'ada@example.com', name: 'Ada SSO', single_sign_on: true } });
      const users = await server().request('GET', '/v1/users', { key });
      expect(users.body.data.filter((user: { email: string }) => user.email === 'ada@example.com')).toHaveLength(1);

      // The role follows the provider: next time the claim says admin.
      const again = await ssoSignIn(server(), { ...claims, groups: ['verdict-admins'] });
      const promoted = await server().request('GET', '/ui/session', { headers: { cookie: `verdict_session=${again.session}` } });
      expect(promoted.body.role).toBe('admin');
      expect(
        (await server().request('GET', '/v1/users', { key })).body.data.filter((user: { email: string }) => user.email === 'ada@example.com'),
      ).toHaveLength(1);
      expect(provider.refusals).toEqual([]);
    });

    it('refuses an id_token with a wrong audience, issuer or nonce, an expired one, an unsigned one and one signed by another key', async () => {
      const claims = { sub: 'sso-mallory', email: 'mallory@example.com', email_verified: true, groups: ['admin'] };
      for (const fault of ['wrong-audience', 'wrong-issuer', 'wrong-nonce', 'expired', 'unsigned', 'foreign-key'] as const) {
        const refused = await ssoSignIn(server(), claims, fault);
        expect(refused.status, fault).toBe(401);
        expect(refused.session, fault).toBeNull();
        expect(refused.text, fault).toContain('single sign-on failed');
      }
      const users = await server().request('GET', '/v1/users', { key });
      expect(users.body.data.map((user: { email: string }) => user.email)).not.toContain('mallory@example.com');
    });

    it('refuses an answer that does not belong to the browser (state) and a callback without the flow cookie', async () => {
      const claims = { sub: 'sso-eve', email: 'eve@example.com', email_verified: true };
      const forged = await ssoSignIn(server(), claims, 'none', (callback) => callback.searchParams.set('state', 'forged'));
      expect(forged.status).toBe(401);
      expect(forged.session).toBeNull();
      const bare = await fetch(`${server().url}/ui/oidc/callback?code=x&state=y`, { redirect: 'manual' });
      expect(bare.status).toBe(401);
    });

    it('links an invited account by its verified address, and refuses an unverified one', async () => {
      const invited = await server().request('POST', '/v1/users', { key, body: { email: 'grace@example.com', role: 'viewer' } });
      expect(invited.status).toBe(201);
      const unverified = await ssoSignIn(server(), { sub: 'sso-grace', email: 'grace@example.com', email_verified: false });
      expect(unverified.status).toBe(401);
      const verified = await ssoSignIn(server(), { sub: 'sso-grace', email: 'grace@example.com', email_verified: true, groups: ['viewer'] });
      expect(verified.status).toBe(302);
      const users = (await server().request('GET', '/v1/users', { key })).body.data.filter((user: { email: string }) => user.email === 'grace@example.com');
      expect(users).toEqual([expect.objectContaining({ id: invited.body.user.id, single_sign_on: true, status: 'active' })]);
    });

    it('tells the sign-in page that single sign-on is offered', async () => {
      const anonymous = await server().request('GET', '/ui/session');
      expect(anonymous.body).toMatchObject({ signed_in: false, sso: true });
    });
  },
  { config: { oidc } },
);
