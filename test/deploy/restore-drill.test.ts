import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { bufferFileOf } from '../../src/buffer/buffer-file.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { drainEvents } from '../analysis/support.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The restore drill of docs/deployment.md, as written there: back up a running Verdict
// (SQLite: `sqlite3 … ".backup …"` plus secret.key; PostgreSQL: `pg_dump -Fc`, then `pg_restore`
// into an empty database, with the same VERDICT_SECRET_KEY), start a new server on the copy, and
// check that the key, the data up to the backup and the webhook secrets (which only the same
// secret key can open) all work there.

const has = (tool: string) => spawnSync('bash', ['-c', `command -v ${tool}`]).status === 0;

function sign(secret: string, body: string): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

interface Restorable {
  /** Backs up the running database; returns the restored copy to start a server on. */
  backUp(): Promise<TestDatabase>;
}

function sqliteDrill(source: TestDatabase): Restorable {
  return {
    async backUp() {
      const target = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-restore-'));
      const file = source.config.kind === 'sqlite' ? source.config.file : '';
      // The buffer's file first (docs/deployment.md): an event drained between the two copies is then in both, and stored once.
      execFileSync('sqlite3', [bufferFileOf(file), `.backup ${bufferFileOf(path.join(target, 'verdict.sqlite'))}`]);
      execFileSync('sqlite3', [file, `.backup ${path.join(target, 'verdict.sqlite')}`]);
      fs.copyFileSync(path.join(source.dataDir, 'secret.key'), path.join(target, 'secret.key'));
      return {
        config: { kind: 'sqlite', file: path.join(target, 'verdict.sqlite') },
        dataDir: target,
        drop: async () => fs.rmSync(target, { recursive: true, force: true }),
      };
    },
  };
}

function postgresDrill(source: TestDatabase): Restorable {
  return {
    async backUp() {
      const url = source.config.kind === 'postgres' ? source.config.url : '';
      const dump = path.join(source.dataDir, 'verdict.dump');
      execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, url]);
      const name = `verdict_restore_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const target = new URL(url);
      target.pathname = `/${name}`;
      execFileSync('pg_restore', ['--no-owner', `--dbname=${target}`, dump]);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-restore-'));
      return {
        config: { kind: 'postgres', url: target.toString() },
        dataDir,
        drop: async () => {
          // The source database is gone by then: connect to the test run's own database.
          const cleanup = new pg.Client({ connectionString: process.env.VERDICT_TEST_DATABASE_URL });
          await cleanup.connect();
          await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await cleanup.end();
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}

describeEach('backup and restore drill', {}, ({ dialect }) => {
  const tools = dialect === 'sqlite' ? ['sqlite3'] : ['pg_dump', 'pg_restore'];
  const missing = tools.filter((tool) => !has(tool));
  // PostgreSQL keeps no key file: every process gets VERDICT_SECRET_KEY, the restored one too.
  const secretKey = dialect === 'postgres' ? crypto.randomBytes(32).toString('hex') : null;
  let original: TestServer;
  let restored: TestServer;
  let key: string;
  let inboundPath: string;
  let inboundSecret: string;
  let copy: TestDatabase | undefined;

  afterAll(async () => {
    await restored?.close();
    await copy?.drop();
  });

  beforeAll(async () => {
    if (missing.length > 0) return;
    const database = await createTestDatabase(dialect);
    original = await startTestServer(dialect, { database, config: { secretKey } });
    const workspace = await original.bootstrap('Backed up');
    key = workspace.key;
    const source = await original.request('POST', '/v1/webhook-sources', { key, body: { slug: 'crm', name: 'CRM' } });
    expect(source.status, source.text).toBe(201);
    [inboundPath, inboundSecret] = [source.body.inbound_path, source.body.inbound_secret];
    const events = [1, 2, 3].map((n) => ({ event_key: 'signup', unit_id: `user-${n}` }));
    expect((await original.request('POST', '/v1/events/batch', { key, body: { events } })).status).toBe(202);
    await drainEvents(original);
    const drill = dialect === 'sqlite' ? sqliteDrill(database) : postgresDrill(database);
    copy = await drill.backUp(); // while the original runs
    expect((await original.request('POST', '/v1/events', { key, body: { event_key: 'signup', unit_id: 'after-backup' } })).status).toBe(202);
    await drainEvents(original);
    await original.close();
    await database.drop();
    restored = await startTestServer(dialect, { database: copy, config: { secretKey } });
  }, 120_000);

  it.skipIf(missing.length > 0)(`restores keys and data up to the backup (needs ${tools.join(', ')})`, async () => {
    const current = await restored.request('GET', '/v1/workspaces/current', { key });
    expect(current.status, current.text).toBe(200);
    expect(current.body.name).toBe('Backed up');
    const events = await restored.ctx.db.selectFrom('events').select('unit_id').orderBy('unit_id').execute();
    expect(events.map((event) => event.unit_id)).toEqual(['user-1', 'user-2', 'user-3']);
  });

  it.skipIf(missing.length > 0)('opens the stored webhook secrets with the same secret key: a signed delivery is accepted', async () => {
    const body = JSON.stringify({ event_key: 'signup', unit_id: 'user-9' });
    const delivery = await restored.request('POST', inboundPath, {
      rawBody: body,
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(inboundSecret, body) },
    });
    expect(delivery.status, delivery.text).toBe(202);
    expect(delivery.body.accepted_count).toBe(1);
  });
});
