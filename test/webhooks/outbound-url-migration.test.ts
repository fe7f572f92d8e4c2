// Migration 0028 on a database written before it: each endpoint's plain URL is sealed with the
// secret key and masked, the plain column goes, and the audit entries written before keep only
// the masked URL. Without the key it stops before changing anything. The database is put back in
// its state before 0028 (the plain column, the migration unrecorded), then migrated again.
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrateDatabase, type Db } from '../../src/db/database.js';
import { SecretBox } from '../../src/lib/secrets.js';
import type { Worker } from '../../src/jobs/worker.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver } from './receiver.js';
import { auditOf, startWorker, waitFor } from './support.js';

const TOKEN = 'B0TOKENb0tokenB0TOKEN';
const outbound = { retryBaseMs: 60_000, timeoutMs: 2_000, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 };

/** The schema as it was before 0028, with one endpoint and its audit entries as they were written then. */
async function writeAsBefore(db: Db, workspaceId: string, url: string, secretEnc: string): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('url', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('url_enc').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('url_masked').execute();
  await sql`DELETE FROM kysely_migration WHERE name = '0028_sealed_endpoint_urls'`.execute(db);
  const row = { id: 'ep_before', workspace_id: workspaceId, url, description: '', event_types: '["*"]', enabled: 1, format: 'verdict', secret_enc: secretEnc };
  await sql`INSERT INTO webhook_endpoints (id, workspace_id, url, description, event_types, enabled, format, secret_enc, created_at, updated_at)
    VALUES (${row.id}, ${row.workspace_id}, ${row.url}, ${row.description}, ${row.event_types}, ${row.enabled}, ${row.format}, ${row.secret_enc}, 1, 1)`.execute(
    db,
  );
  const entries: Array<[string, string, unknown]> = [
    ['au_1', 'webhook_endpoint.created', { url, description: '', event_types: ['*'], enabled: true, format: 'verdict', warnings: [] }],
    ['au_2', 'webhook_endpoint.updated', { changes: { url: { from: `${url}-old`, to: url } }, warnings: [] }],
    ['au_3', 'webhook_endpoint.pinged', { event_id: 'e', delivery_id: 'd' }],
  ];
  for (const [id, action, payload] of entries) {
    await sql`INSERT INTO audit_entries (id, workspace_id, actor_id, action, target_type, target_id, payload, created_at)
      VALUES (${id}, ${workspaceId}, ${null}, ${action}, 'webhook_endpoint', 'ep_before', ${JSON.stringify(payload)}, 1)`.execute(db);
  }
}

describeEach('migration 0028 seals the URLs of existing endpoints', {}, ({ dialect }) => {
  const secretKey = crypto.randomBytes(32).toString('hex');
  const receiver = new Receiver();
  let database: TestDatabase;
  let server: TestServer;
  let worker: Worker;
  let key: string;
  let url: string;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    url = `http://user:pw@127.0.0.1:${await receiver.listen()}/services/${TOKEN}`;
    const before = await startTestServer(dialect, { database, config: { secretKey } });
    const boot = await before.bootstrap();
    key = boot.key;
    await writeAsBefore(before.ctx.db, boot.workspaceId, url, before.ctx.secrets.seal('whsec_before'));
    await before.close();
  });
  afterAll(async () => {
    await worker?.stop(0);
    await server?.close();
    await receiver.close();
    await database.drop();
  });

  it('stops, changing nothing, without the secret key; with it, seals and masks the URL and the audit entries', async () => {
    await expect(migrateDatabase(database.config, null)).rejects.toThrow(/needs the secret key/);
    expect((await migrateDatabase(database.config, new SecretBox(Buffer.from(secretKey, 'hex')))).applied).toEqual(['0028_sealed_endpoint_urls']);
    server = await startTestServer(dialect, { database, config: { secretKey, outbound } });
    worker = startWorker(server);

    const masked = `http://127.0.0.1:${new URL(url).port}/…OKEN`;
    const read = await server.request('GET', '/v1/webhook-endpoints/ep_before', { key });
    expect(read.status, read.text).toBe(200);
    expect(read.body.url).toBe(masked);
    const stored = await server.ctx.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(TOKEN);
    const entries = await auditOf(server, key, 'target_id=ep_before');
    expect(JSON.stringify(entries)).not.toContain(TOKEN);
    expect(entries.find((entry) => entry.action === 'webhook_endpoint.created')?.payload.url).toBe(masked);
    expect(entries.find((entry) => entry.action === 'webhook_endpoint.updated')?.payload.changes.url).toEqual({
      from: `${masked.slice(0, -4)}-old`,
      to: masked,
    });
    expect(entries.find((entry) => entry.action === 'webhook_endpoint.pinged')?.payload).toEqual({ event_id: 'e', delivery_id: 'd' });

    // The sealed URL still takes deliveries where they went.
    expect((await server.request('POST', '/v1/webhook-endpoints/ep_before/test', { key })).status).toBe(202);
    const delivered = await waitFor(() => Promise.resolve(receiver.received.find((item) => item.path === `/services/${TOKEN}`)), 'the ping');
    expect(delivered.headers.authorization).toBe(`Basic ${Buffer.from('user:pw').toString('base64')}`);
  });
});
