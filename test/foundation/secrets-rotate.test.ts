import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver, verifies } from '../webhooks/receiver.js';
import { startWorker, waitFor } from '../webhooks/support.js';

// `verdict secrets rotate` (docs/deployment.md, "The secret key"): with the servers stopped it
// re-encrypts every stored webhook secret under a new key; a server started with the new key
// then verifies deliveries signed with the same secrets as before. Key file (SQLite) and
// VERDICT_SECRET_KEY (PostgreSQL) modes, through the real command line.

const ROOT = path.resolve(import.meta.dirname, '../..');

function signature(secret: string, body: string): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

function cliEnv(database: TestDatabase, secretKey: string | null): NodeJS.ProcessEnv {
  const url = database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, VERDICT_DATA_DIR: database.dataDir, VERDICT_DATABASE_URL: url, VERDICT_LOG_LEVEL: 'warn' };
  if (secretKey) env.VERDICT_SECRET_KEY = secretKey;
  return env;
}

async function rotate(env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['bin/verdict.js', 'secrets', 'rotate'], { cwd: ROOT, env, encoding: 'utf8' });
}

describeEach('verdict secrets rotate', {}, ({ dialect }) => {
  const oldKey = dialect === 'postgres' ? crypto.randomBytes(32).toString('hex') : null;
  let database: TestDatabase;
  let server: TestServer | undefined;
  let key: string;
  let inbound: { path: string; secret: string };
  let outbound: { id: string; secrets: string[] };
  const receiver = new Receiver();
  let oldKeyFile: string;
  let rotated: { stdout: string; stderr: string };

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    const before = await startTestServer(dialect, { database, config: { secretKey: oldKey } });
    key = (await before.bootstrap('Rotating')).key;
    const source = await before.request('POST', '/v1/webhook-sources', { key, body: { slug: 'crm', name: 'CRM' } });
    expect(source.status, source.text).toBe(201);
    // A rotated source secret too, so its previous secret (sealed) is re-encrypted as well.
    const again = await before.request('POST', `/v1/webhook-sources/${source.body.id}/rotate-secret`, { key });
    expect(again.status, again.text).toBe(200);
    inbound = { path: source.body.inbound_path, secret: again.body.inbound_secret };
    // An outbound endpoint with a rotated secret: its URL and both its secrets are sealed; the
    // server with the new key must still send to that URL, signed with both.
    const url = `http://127.0.0.1:${await receiver.listen()}/hook`;
    const endpoint = await before.request('POST', '/v1/webhook-endpoints', { key, body: { url, event_types: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const rotatedEndpoint = await before.request('POST', `/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`, { key });
    outbound = { id: endpoint.body.id, secrets: [endpoint.body.secret, rotatedEndpoint.body.secret] };
    await before.close();
    oldKeyFile = dialect === 'sqlite' ? fs.readFileSync(path.join(database.dataDir, 'secret.key'), 'utf8') : '';
    rotated = await rotate(cliEnv(database, oldKey));
  }, 120_000);

  afterAll(async () => {
    await receiver.close();
    await server?.close();
    await database?.drop();
  });

  async function startWith(secretKey: string | null): Promise<TestServer> {
    const config: Partial<Config> = {
      secretKey,
      outbound: { retryBaseMs: 100, timeoutMs: 5_000, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 },
    };
    return startTestServer(dialect, { database, config });
  }

  it('re-encrypts the stored secrets under a new key and says how many', () => {
    expect(rotated.stderr).toMatch(/re-encrypted 6 secrets of 1 workspaces/);
    if (dialect === 'sqlite') {
      expect(fs.readFileSync(path.join(database.dataDir, 'secret.key'), 'utf8')).not.toBe(oldKeyFile);
      expect(fs.existsSync(path.join(database.dataDir, 'secret.key.next'))).toBe(false);
    } else {
      expect(rotated.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      expect(rotated.stdout.trim()).not.toBe(oldKey);
    }
  });

  it('a server with the new key verifies deliveries signed with the unchanged secret, and the audit log says so', async () => {
    server = await startWith(dialect === 'sqlite' ? null : rotated.stdout.trim());
    const body = JSON.stringify({ event_key: 'signup', unit_id: 'user-1' });
    const delivery = await server.request('POST', inbound.path, {
      rawBody: body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signature(inbound.secret, body) },
    });
    expect(delivery.status, delivery.text).toBe(202);
    const audit = await server.request('GET', '/v1/audit?action=secret_key.rotated', { key });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0].payload).toEqual({ secrets_reencrypted: 6, via: 'cli' });
  });

  it('a server with the new key signs outbound deliveries with the endpoint’s unchanged secrets', async () => {
    const worker = startWorker(server!);
    try {
      const ping = await server!.request('POST', `/v1/webhook-endpoints/${outbound.id}/test`, { key });
      expect(ping.status, ping.text).toBe(202);
      const [delivered] = await waitFor(async () => (receiver.received.length > 0 ? receiver.received : null), 'the ping');
      for (const secret of outbound.secrets) expect(verifies(delivered!.headers['verdict-signature'], delivered!.body, secret)).toBe(true);
    } finally {
      await worker.stop(0);
    }
  });

  it('refuses, changing nothing, when the current key does not open the stored secrets', async () => {
    const wrong = crypto.randomBytes(32).toString('hex');
    await expect(rotate(cliEnv(database, wrong))).rejects.toThrow(/does not open with the current secret key/);
    const audit = await server!.request('GET', '/v1/audit?action=secret_key.rotated', { key });
    expect(audit.body.data).toHaveLength(1);
  });
});
