import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { PASSWORD, signInAs } from './people-support.js';

const logLines: string[] = [];

describeEachDialect(
  'people: no password, token or secret in logs, responses or the audit log',
  (server) => {
    it('keeps passwords, link tokens and session tokens out of every log line, response and audit payload', async () => {
      const { key } = await server().bootstrap('Secretive Co');
      const invited = await server().request('POST', '/v1/users', { key, body: { email: 'quiet@example.com', role: 'admin' } });
      const inviteToken = invited.body.invite_url.split('/').pop();
      await server().request('POST', `/v1/invitations/${inviteToken}/accept`, { body: { name: 'Quiet', password: PASSWORD } });
      // A wrong password too, and one sent to a malformed body (the 422 must not echo it).
      await server().request('POST', '/ui/session', { body: { email: 'quiet@example.com', password: 'wrong password value' } });
      await server().request('POST', `/v1/invitations/${inviteToken}/accept`, { body: { name: 'Quiet', password: 'tiny' } });
      const session = await signInAs(server(), 'quiet@example.com');
      const reset = await server().request('POST', '/v1/users/' + invited.body.user.id + '/password-reset', { headers: session.change });
      const resetToken = reset.body.reset_url.split('/').pop();
      const shareToken = 'vd_shr_' + 'A'.repeat(43);
      await server().request('GET', `/v1/shared/${shareToken}`);

      const users = await server().request('GET', '/v1/users', { headers: session.read });
      const audit = await server().request('GET', '/v1/audit?limit=200', { key });
      const who = await server().request('GET', '/ui/session', { headers: session.read });
      const exposed = [logLines.join('\n'), users.text, audit.text, who.text];
      const secrets = [PASSWORD, 'wrong password value', 'tiny', inviteToken, resetToken, shareToken, session.token, 'scrypt$'];
      for (const text of exposed) for (const secret of secrets) expect(text.includes(secret), `${secret} in ${text.slice(0, 200)}`).toBe(false);
      expect(logLines.length).toBeGreaterThan(5);
      expect(logLines.join('\n')).toContain('/v1/invitations/');
    });
  },
  { logLines },
);

it('verdict users invite prints the invitation link once, as JSON with --json', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-users-'));
  const env = { ...process.env, VERDICT_DATA_DIR: dataDir, VERDICT_PUBLIC_URL: 'https://verdict.example.com' };
  const cli = (args: string[]) => spawnSync(process.execPath, ['bin/verdict.js', ...args], { env, encoding: 'utf8' });
  const workspace = JSON.parse(cli(['workspaces', 'create', '--name', 'CLI Co', '--json']).stdout);
  const invited = cli(['users', 'invite', '--workspace', workspace.workspace.id, '--email', 'First@Example.com', '--role', 'admin', '--json']);
  expect(invited.status, invited.stderr).toBe(0);
  const body = JSON.parse(invited.stdout);
  expect(body.invite_url).toMatch(/^https:\/\/verdict\.example\.com\/ui\/invitations\/vd_inv_[A-Za-z0-9_-]{43}$/);
  expect(body.user).toMatchObject({ email: 'first@example.com', role: 'admin', status: 'invited' });
  const again = cli(['users', 'invite', '--workspace', workspace.workspace.id, '--email', 'first@example.com', '--role', 'admin']);
  expect(again.status).toBe(1);
  expect(again.stderr).toContain('already has an account');
  const badRole = cli(['users', 'invite', '--workspace', workspace.workspace.id, '--email', 'x@example.com', '--role', 'owner']);
  expect(badRole.status).toBe(1);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);
