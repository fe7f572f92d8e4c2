import { beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/secrets.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';

/** A clock the tests move forward, so a 12-hour expiry needs no waiting. */
const clock = { offset: 0, now: () => Date.now() + clock.offset };
const TWELVE_HOURS = 12 * 60 * 60 * 1000;

interface Session {
  cookie: string;
  token: string;
  csrf: string;
  setCookie: string;
}

async function signIn(server: TestServer, key: string, headers: Record<string, string> = {}): Promise<Session> {
  const response = await server.request('POST', '/ui/session', { body: { key }, headers });
  expect(response.status, response.text).toBe(201);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const token = /verdict_session=([^;]+)/.exec(setCookie)?.[1];
  if (!token) throw new Error(`no session cookie in ${setCookie}`);
  return { cookie: `verdict_session=${token}`, token, csrf: response.body.csrf_token, setCookie };
}

function withSession(session: Session, csrf?: string): Record<string, string> {
  return csrf === undefined ? { cookie: session.cookie } : { cookie: session.cookie, 'x-csrf-token': csrf };
}

describeEachDialect(
  'admin UI sessions',
  (server) => {
    let key: string;
    let keyId: string;
    let environmentId: string;

    beforeAll(async () => {
      ({ key, keyId, environmentId } = await server().bootstrap('UI Co'));
    });

    it('signs in with a server key: an httpOnly, SameSite=Strict, Path=/ cookie and the CSRF token in the body', async () => {
      const response = await server().request('POST', '/ui/session', { body: { key } });
      expect(response.status).toBe(201);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const cookie = response.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/^verdict_session=[A-Za-z0-9_-]{43}; /);
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; SameSite=Strict/);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).toMatch(/; Max-Age=43200/);
      expect(cookie).not.toMatch(/Secure/);
      expect(response.body).toMatchObject({
        signed_in: true,
        csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        key: { id: keyId, prefix: 'vd_srv_all', last_four: key.slice(-4) },
        workspace: { name: 'UI Co' },
      });
      expect(Date.parse(response.body.expires_at) - clock.now()).toBeGreaterThan(TWELVE_HOURS - 60_000);
    });

    it('marks the cookie Secure when the request came over https (through a proxy that says so)', async () => {
      const session = await signIn(server(), key, { 'x-forwarded-proto': 'https' });
      expect(session.setCookie).toMatch(/; Secure/);
    });

    it('stores only the SHA-256 of the session token', async () => {
      const session = await signIn(server(), key);
      const rows = await server().ctx.db.selectFrom('sessions').selectAll().execute();
      expect(rows.some((row) => row.token_hash === sha256Hex(session.token))).toBe(true);
      expect(JSON.stringify(rows)).not.toContain(session.token);
      const row = rows.find((r) => r.token_hash === sha256Hex(session.token));
      expect(row).toMatchObject({ key_id: keyId, csrf_token: session.csrf });
      expect(Number(row?.expires_at) - Number(row?.created_at)).toBe(TWELVE_HOURS);
    });

    it('tells the UI whether it is signed in', async () => {
      const session = await signIn(server(), key);
      const signedIn = await server().request('GET', '/ui/session', { headers: withSession(session) });
      expect(signedIn.body).toMatchObject({ signed_in: true, csrf_token: session.csrf, key: { id: keyId } });
      const anonymous = await server().request('GET', '/ui/session');
      expect(anonymous.status).toBe(200);
      expect(anonymous.body).toEqual({ signed_in: false, reason: 'none', key_sign_in: true, sso: false });
    });

    it('authenticates API reads through the cookie', async () => {
      const session = await signIn(server(), key);
      const response = await server().request('GET', '/v1/workspaces/current', { headers: withSession(session) });
      expect(response.status).toBe(200);
      expect(response.body.name).toBe('UI Co');
    });

    it.each([
      ['unknown', () => `vd_srv_all_${'A'.repeat(43)}`, /unknown or has been revoked/],
      ['malformed', () => 'not-a-key', /malformed/],
    ])('refuses an %s key with a 401 problem and no cookie', async (_label, given, detail) => {
      const response = await server().request('POST', '/ui/session', { body: { key: given() } });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(response.body.detail).toMatch(detail);
    });

    it('refuses a client key', async () => {
      const client = await server().request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } });
      const response = await server().request('POST', '/ui/session', { body: { key: client.body.key } });
      expect(response.status).toBe(401);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(response.body.detail).toMatch(/client key cannot sign in/);
    });

    it('refuses a revoked key, and a revoked key ends its sessions', async () => {
      const other = await server().request('POST', '/v1/api-keys', { key, body: { name: 'ops', kind: 'server' } });
      const session = await signIn(server(), other.body.key);
      expect((await server().request('GET', '/v1/audit', { headers: withSession(session) })).status).toBe(200);
      expect((await server().request('DELETE', `/v1/api-keys/${other.body.id}`, { key })).status).toBe(204);
      const after = await server().request('GET', '/v1/audit', { headers: withSession(session) });
      expect(after.status).toBe(401);
      expect(after.body.detail).toMatch(/revoked/);
      const again = await server().request('POST', '/ui/session', { body: { key: other.body.key } });
      expect(again.status).toBe(401);
      expect(again.headers.get('set-cookie')).toBeNull();
    });

    it('requires the CSRF token on POST, PATCH and DELETE through a session', async () => {
      const session = await signIn(server(), key);
      const metric = { key: `m-${Date.now()}`, name: 'Clicks', event_key: 'click', kind: 'binary' };
      for (const csrf of [undefined, 'wrong', `${session.csrf}x`]) {
        const refused = await server().request('POST', '/v1/metrics', { body: metric, headers: withSession(session, csrf) });
        expect(refused.status, `csrf ${csrf}`).toBe(403);
        expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(refused.body.detail).toMatch(/X-CSRF-Token/);
      }
      const created = await server().request('POST', '/v1/metrics', { body: metric, headers: withSession(session, session.csrf) });
      expect(created.status).toBe(201);

      const experiment = await server().request('POST', '/v1/experiments', {
        headers: withSession(session, session.csrf),
        body: {
          environment_id: environmentId,
          key: `e-${Date.now()}`,
          name: 'Button',
          hypothesis: 'green wins',
          unit_type: 'user',
          variants: [
            { key: 'control', weight: 50 },
            { key: 'green', weight: 50 },
          ],
        },
      });
      expect(experiment.status).toBe(201);
      const path = `/v1/experiments/${experiment.body.id}`;
      expect((await server().request('PATCH', path, { body: { name: 'B' }, headers: withSession(session) })).status).toBe(403);
      expect((await server().request('PATCH', path, { body: { name: 'B' }, headers: withSession(session, session.csrf) })).status).toBe(200);
      expect((await server().request('DELETE', path, { headers: withSession(session) })).status).toBe(403);
      expect((await server().request('DELETE', path, { headers: withSession(session, session.csrf) })).status).toBe(204);
    });

    it('leaves bearer keys unaffected: no CSRF token needed, and the header wins over a cookie', async () => {
      const metric = { key: `b-${Date.now()}`, name: 'Buys', event_key: 'buy', kind: 'binary' };
      expect((await server().request('POST', '/v1/metrics', { key, body: metric })).status).toBe(201);
      const withStaleCookie = await server().request('GET', '/v1/workspaces/current', {
        key,
        headers: { cookie: 'verdict_session=stale' },
      });
      expect(withStaleCookie.status).toBe(200);
      const badBearerGoodCookie = await server().request('GET', '/v1/workspaces/current', {
        headers: { ...withSession(await signIn(server(), key)), authorization: 'Bearer nope' },
      });
      expect(badBearerGoodCookie.status).toBe(401);
      const unknownCookie = await server().request('GET', '/v1/workspaces/current', { headers: { cookie: 'verdict_session=stale' } });
      expect(unknownCookie.status).toBe(401);
      expect(unknownCookie.body.detail).toMatch(/sign in again/);
    });

    it('signs out: CSRF required, the row deleted, the cookie cleared, both audited', async () => {
      const session = await signIn(server(), key);
      expect((await server().request('DELETE', '/ui/session', { headers: withSession(session) })).status).toBe(403);
      const out = await server().request('DELETE', '/ui/session', { headers: withSession(session, session.csrf) });
      expect(out.status).toBe(204);
      expect(out.headers.get('set-cookie')).toMatch(/^verdict_session=; .*Expires=Thu, 01 Jan 1970/);
      const after = await server().request('GET', '/v1/workspaces/current', { headers: withSession(session) });
      expect(after.status).toBe(401);
      const rows = await server().ctx.db.selectFrom('sessions').select('id').where('token_hash', '=', sha256Hex(session.token)).execute();
      expect(rows).toHaveLength(0);
      const audit = await server().request('GET', '/v1/audit?target_type=session', { key });
      const actions = audit.body.data.map((entry: { action: string }) => entry.action);
      expect(actions).toContain('session.signed_in');
      expect(actions).toContain('session.signed_out');
      expect(audit.body.data.every((entry: { actor_id: string }) => entry.actor_id)).toBe(true);
      // Signing out again (or with no session) is harmless.
      expect((await server().request('DELETE', '/ui/session', { headers: withSession(session) })).status).toBe(204);
    });

    it('expires a session 12 hours after sign-in', async () => {
      const session = await signIn(server(), key);
      try {
        clock.offset = TWELVE_HOURS - 1_000;
        expect((await server().request('GET', '/v1/workspaces/current', { headers: withSession(session) })).status).toBe(200);
        clock.offset = TWELVE_HOURS;
        const expired = await server().request('GET', '/v1/workspaces/current', { headers: withSession(session) });
        expect(expired.status).toBe(401);
        expect(expired.body.detail).toMatch(/expired/);
        const state = await server().request('GET', '/ui/session', { headers: withSession(session) });
        expect(state.body).toEqual({ signed_in: false, reason: 'expired', key_sign_in: true, sso: false });
        expect(state.headers.get('set-cookie')).toMatch(/^verdict_session=;/);
      } finally {
        clock.offset = 0;
      }
    });
  },
  { clock },
);
