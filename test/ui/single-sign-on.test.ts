// Single sign-on in the browser (docs/deployment.md "People and single sign-on"): the sign-in
// page's button goes through a local OpenID Connect provider (test/support/oidc-provider.ts, which
// approves at once) and back, and the person lands signed in with the role their claim maps to;
// the HTTP details (PKCE, state, nonce, refused tokens) are in test/people/oidc.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OidcConfig } from '../../src/config.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { chromiumAvailable, ensureWebBuild, launchBrowser, type Browser } from './browser-support.js';

describe.skipIf(!chromiumAvailable())('single sign-on in the admin UI (Chromium)', () => {
  let provider: TestOidcProvider;
  let server: TestServer;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    ensureWebBuild();
    provider = await startOidcProvider();
    const oidc: OidcConfig = {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      workspaceId: 'set once the workspace exists',
      roleClaim: 'groups',
      roleValues: { viewer: ['viewer'], editor: ['eng'], admin: ['verdict-admins'] },
      defaultRole: 'viewer',
    };
    server = await startTestServer('sqlite', { config: { oidc } });
    const boot = await server.bootstrap('SSO Browser Co');
    key = boot.key;
    (server.ctx.config.oidc as OidcConfig).workspaceId = boot.workspaceId;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await provider?.close();
  });

  async function signInThroughProvider(claims: Record<string, unknown>): Promise<void> {
    provider.next = { claims, fault: 'none' };
    const page = browser.page;
    await page.goto(`${server.url}/ui/`);
    await page.getByRole('link', { name: 'Continue with single sign-on' }).click();
    await page.getByRole('heading', { name: 'Experiments' }).waitFor();
  }

  it('signs a person in through the provider with the role their group maps to, as an account of the workspace', async () => {
    await signInThroughProvider({ sub: 'sso-olive', email: 'olive@example.com', email_verified: true, name: 'Olive Owner', groups: ['verdict-admins'] });
    const page = browser.page;
    await page.getByText('Olive Owner · admin').waitFor();
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('cell', { name: 'olive@example.com' }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Verdict' }).waitFor();

    const users = await server.request('GET', '/v1/users', { key });
    expect(users.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'olive@example.com', role: 'admin' })]));
  });

  it('gives a person without a mapped group the default role, which the server enforces', async () => {
    await signInThroughProvider({ sub: 'sso-victor', email: 'victor@example.com', email_verified: true, name: 'Victor Viewer', groups: ['staff'] });
    const page = browser.page;
    await page.getByText('Victor Viewer · viewer').waitFor();
    expect(await page.getByRole('link', { name: 'People' }).count()).toBe(0);
    const refused = await page.evaluate(async () => {
      const session = (await (await fetch('/ui/session')).json()) as { csrf_token?: string };
      const answer = await fetch('/v1/metrics', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token ?? '' },
        body: JSON.stringify({ key: 'viewer_metric', event_key: 'x', kind: 'count' }),
      });
      return { status: answer.status, type: answer.headers.get('content-type'), detail: ((await answer.json()) as { detail?: string }).detail ?? '' };
    });
    expect(refused.status).toBe(403);
    expect(refused.type).toContain('application/problem+json');
    expect(refused.detail).toMatch(/editor/);
  });
});
