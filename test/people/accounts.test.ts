import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { addPerson, PASSWORD, requestFrom, sessionFrom, signInAs } from './people-support.js';

const TOKEN_IN_LINK = /^http:\/\/[^/]+\/ui\/invitations\/vd_inv_[A-Za-z0-9_-]{43}$/;

describeEachDialect('people: accounts, sign-in and sessions', (server) => {
  let key: string;

  beforeAll(async () => {
    ({ key } = await server().bootstrap('People Co'));
  });

  it('an admin invites by email and role; the one-time link sets name and password; the person then signs in with them', async () => {
    const invited = await server().request('POST', '/v1/users', { key, body: { email: 'Ada@Example.com', role: 'editor' } });
    expect(invited.status).toBe(201);
    expect(invited.headers.get('cache-control')).toBe('no-store');
    expect(invited.body.invite_url).toMatch(TOKEN_IN_LINK);
    expect(invited.body.user).toMatchObject({ email: 'ada@example.com', role: 'editor', status: 'invited', name: null });

    const token = invited.body.invite_url.split('/').pop();
    const accepted = await server().request('POST', `/v1/invitations/${token}/accept`, { body: { name: 'Ada Lovelace', password: PASSWORD } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.user).toMatchObject({ name: 'Ada Lovelace', status: 'active' });

    const again = await server().request('POST', `/v1/invitations/${token}/accept`, { body: { name: 'Mallory', password: 'another password 1' } });
    expect(again.status).toBe(410);
    expect(again.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const signedIn = await server().request('POST', '/ui/session', { body: { email: 'ada@example.com', password: PASSWORD } });
    expect(signedIn.status).toBe(201);
    expect(signedIn.body).toMatchObject({ signed_in: true, key: null, role: 'editor', user: { email: 'ada@example.com', name: 'Ada Lovelace' } });
    expect(signedIn.body.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = signedIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);

    const session = sessionFrom(cookie, signedIn.body.csrf_token);
    const who = await server().request('GET', '/ui/session', { headers: session.read });
    expect(who.body).toMatchObject({ signed_in: true, role: 'editor', user: { name: 'Ada Lovelace' } });
  });

  it('refuses bad links and bad passwords with problems, and a second account for one address with 409', async () => {
    const unknown = await server().request('POST', `/v1/invitations/vd_inv_${'A'.repeat(43)}/accept`, { body: { name: 'X', password: PASSWORD } });
    expect(unknown.status).toBe(404);
    const malformed = await server().request('POST', '/v1/invitations/not-a-token/accept', { body: { name: 'X', password: PASSWORD } });
    expect(malformed.status).toBe(400);
    const invited = await server().request('POST', '/v1/users', { key, body: { email: 'weak@example.com', role: 'viewer' } });
    const weak = await server().request('POST', `/v1/invitations/${invited.body.invite_url.split('/').pop()}/accept`, {
      body: { name: 'W', password: 'short' },
    });
    expect(weak.status).toBe(422);
    expect(JSON.stringify(weak.body.errors)).toContain('password');
    const twice = await server().request('POST', '/v1/users', { key, body: { email: 'WEAK@example.com', role: 'admin' } });
    expect(twice.status).toBe(409);
    const badRole = await server().request('POST', '/v1/users', { key, body: { email: 'x@example.com', role: 'owner' } });
    expect(badRole.status).toBe(422);
  });

  it('answers a wrong password and an unknown address alike (401, same detail)', async () => {
    await addPerson(server(), key, 'grace@example.com', 'viewer');
    const wrong = await requestFrom(server(), '127.0.0.5', 'POST', '/ui/session', { email: 'grace@example.com', password: 'not the password' });
    const nobody = await requestFrom(server(), '127.0.0.5', 'POST', '/ui/session', { email: 'nobody@example.com', password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(nobody.status).toBe(401);
    expect(wrong.body.detail).toBe(nobody.body.detail);
    expect(wrong.setCookie).toBe('');
  });

  it('locks out guessing at one address without locking the person out from another', async () => {
    await addPerson(server(), key, 'locked@example.com', 'editor');
    for (let attempt = 0; attempt < 5; attempt++) {
      const guess = await requestFrom(server(), '127.0.0.2', 'POST', '/ui/session', { email: 'locked@example.com', password: `guess number ${attempt}` });
      expect(guess.status).toBe(401);
    }
    const blocked = await requestFrom(server(), '127.0.0.2', 'POST', '/ui/session', { email: 'locked@example.com', password: PASSWORD });
    expect(blocked.status).toBe(429);
    expect(blocked.body.type).toMatch(/too-many-requests/);
    const owner = await requestFrom(server(), '127.0.0.3', 'POST', '/ui/session', { email: 'locked@example.com', password: PASSWORD });
    expect(owner.status).toBe(201);
  });

  it('counts sign-ins behind a reverse proxy on the same host under the address the proxy saw', async () => {
    await addPerson(server(), key, 'proxied@example.com', 'viewer');
    const viaProxy = (client: string, password: string) =>
      requestFrom(server(), '127.0.0.9', 'POST', '/ui/session', { email: 'proxied@example.com', password }, { 'x-forwarded-for': `10.9.9.9, ${client}` });
    for (let attempt = 0; attempt < 5; attempt++) expect((await viaProxy('203.0.113.7', `wrong guess ${attempt}`)).status).toBe(401);
    expect((await viaProxy('203.0.113.7', PASSWORD)).status).toBe(429);
    expect((await viaProxy('198.51.100.4', PASSWORD)).status).toBe(201);
  });

  it('stops a password spray: one address trying one password over many accounts is refused after 30 failures', async () => {
    await addPerson(server(), key, 'sprayed@example.com', 'viewer');
    const statuses: number[] = [];
    for (let account = 0; account < 31; account++) {
      const attempt = await requestFrom(server(), '127.0.0.4', 'POST', '/ui/session', { email: `user${account}@example.com`, password: 'Summer2026!' });
      statuses.push(attempt.status);
    }
    expect(statuses.slice(0, 30).every((status) => status === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    // Even the right password of a real account is refused from that address while the window lasts...
    const sprayer = await requestFrom(server(), '127.0.0.4', 'POST', '/ui/session', { email: 'sprayed@example.com', password: PASSWORD });
    expect(sprayer.status).toBe(429);
    // ...while the person signs in from anywhere else.
    expect((await requestFrom(server(), '127.0.0.6', 'POST', '/ui/session', { email: 'sprayed@example.com', password: PASSWORD })).status).toBe(201);
  }, 60_000);

  it('defeats session fixation: a planted cookie is ended and replaced by a fresh token', async () => {
    await addPerson(server(), key, 'fixed@example.com', 'editor');
    const planted = await signInAs(server(), 'fixed@example.com');
    const victim = await server().request('POST', '/ui/session', {
      body: { email: 'fixed@example.com', password: PASSWORD },
      headers: { cookie: planted.cookie },
    });
    expect(victim.status).toBe(201);
    const fresh = sessionFrom(victim.headers.get('set-cookie') ?? '', victim.body.csrf_token);
    expect(fresh.token).not.toBe(planted.token);
    expect((await server().request('GET', '/v1/metrics', { headers: planted.read })).status).toBe(401);
    expect((await server().request('GET', '/v1/metrics', { headers: fresh.read })).status).toBe(200);
    const invented = await server().request('POST', '/ui/session', {
      body: { email: 'fixed@example.com', password: PASSWORD },
      headers: { cookie: 'verdict_session=chosen-by-attacker' },
    });
    expect(invented.status).toBe(201);
    expect(invented.headers.get('set-cookie')).not.toContain('chosen-by-attacker');
  });

  it('refuses a change without the CSRF token, and with another session’s token', async () => {
    await addPerson(server(), key, 'csrf@example.com', 'editor');
    const one = await signInAs(server(), 'csrf@example.com');
    const other = await signInAs(server(), 'csrf@example.com');
    const body = { key: 'csrf_metric', name: 'CSRF', event_key: 'x', type: 'count' };
    const without = await server().request('POST', '/v1/metrics', { headers: one.read, body });
    expect(without.status).toBe(403);
    const crossed = await server().request('POST', '/v1/metrics', { headers: { cookie: one.cookie, 'x-csrf-token': other.csrf }, body });
    expect(crossed.status).toBe(403);
    const listed = await server().request('GET', '/v1/metrics', { key });
    expect(listed.body.data.map((metric: { key: string }) => metric.key)).not.toContain('csrf_metric');
  });

  it('signs out one browser, or every browser of the person', async () => {
    await addPerson(server(), key, 'everywhere@example.com', 'viewer');
    const laptop = await signInAs(server(), 'everywhere@example.com');
    const phone = await signInAs(server(), 'everywhere@example.com');
    const tablet = await signInAs(server(), 'everywhere@example.com');
    expect((await server().request('DELETE', '/ui/session', { headers: tablet.change })).status).toBe(204);
    expect((await server().request('GET', '/v1/metrics', { headers: tablet.read })).status).toBe(401);
    expect((await server().request('GET', '/v1/metrics', { headers: phone.read })).status).toBe(200);
    expect((await server().request('DELETE', '/ui/session?everywhere=1', { headers: laptop.change })).status).toBe(204);
    expect((await server().request('GET', '/v1/metrics', { headers: phone.read })).status).toBe(401);
    expect((await server().request('GET', '/v1/metrics', { headers: laptop.read })).status).toBe(401);
  });

  it('resets a password by an admin-issued link: old sessions and the old password stop working', async () => {
    const { user } = await addPerson(server(), key, 'forgot@example.com', 'editor');
    const before = await signInAs(server(), 'forgot@example.com');
    const issued = await server().request('POST', `/v1/users/${user.id}/password-reset`, { key });
    expect(issued.status).toBe(201);
    expect(issued.body.reset_url).toMatch(/\/ui\/password-resets\/vd_rst_[A-Za-z0-9_-]{43}$/);
    const token = issued.body.reset_url.split('/').pop();
    const reset = await server().request('POST', `/v1/password-resets/${token}/accept`, { body: { password: 'a brand new passphrase' } });
    expect(reset.status).toBe(200);
    expect((await server().request('GET', '/v1/metrics', { headers: before.read })).status).toBe(401);
    expect((await requestFrom(server(), '127.0.0.7', 'POST', '/ui/session', { email: 'forgot@example.com', password: PASSWORD })).status).toBe(401);
    await signInAs(server(), 'forgot@example.com', 'a brand new passphrase');
    expect((await server().request('POST', `/v1/password-resets/${token}/accept`, { body: { password: 'yet another passphrase' } })).status).toBe(410);
  });

  it('disabling an account ends its sessions and refuses its sign-in; the last admin cannot be demoted', async () => {
    const { user } = await addPerson(server(), key, 'leaver@example.com', 'editor');
    const session = await signInAs(server(), 'leaver@example.com');
    const disabled = await server().request('PATCH', `/v1/users/${user.id}`, { key, body: { disabled: true } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    expect((await server().request('GET', '/v1/metrics', { headers: session.read })).status).toBe(401);
    expect((await requestFrom(server(), '127.0.0.8', 'POST', '/ui/session', { email: 'leaver@example.com', password: PASSWORD })).status).toBe(401);

    const { user: admin } = await addPerson(server(), key, 'only-admin@example.com', 'admin');
    const demoted = await server().request('PATCH', `/v1/users/${admin.id}`, { key, body: { role: 'viewer' } });
    expect(demoted.status).toBe(409);
  });
});

describeEachDialect(
  'people: the server-key sign-in turned off',
  (server) => {
    it('refuses {key} with 403 while people still sign in', async () => {
      const { key } = await server().bootstrap('Keyless Co');
      const refused = await server().request('POST', '/ui/session', { body: { key } });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('VERDICT_UI_KEY_SIGN_IN=0');
      await addPerson(server(), key, 'boss@example.com', 'admin');
      await signInAs(server(), 'boss@example.com');
    });
  },
  { config: { uiKeySignIn: false } },
);
