// An upgrade with deliveries pending: the migration that gives jobs their lane moves delivery jobs
// enqueued before it to the outbound lane, with their delivery's workspace (the fair claim groups
// by it), so they are still delivered, and by the delivery pool.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import * as jobLanes from '../../src/db/migrations/0029_job_lanes.js';
import type { Worker } from '../../src/jobs/worker.js';
import { describeEach } from '../support/describe-each.js';
import { startTestWorker } from '../support/jobs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver } from './receiver.js';
import { postTaskTool, waitFor } from './support.js';

describeEach('delivery jobs enqueued before the job lanes', {}, ({ dialect }) => {
  let server: TestServer;
  const receiver = new Receiver();
  beforeAll(async () => {
    const defaults = loadConfig({}).outbound;
    server = await startTestServer(dialect, { config: { outbound: { ...defaults, retryBaseMs: 1_000, timeoutMs: 2_000, allowPrivateNetworks: true } } });
  });
  afterAll(async () => {
    await receiver.close();
    await server.close();
  });

  it('are moved to the outbound lane with their workspace by the migration, and delivered', async () => {
    const { key, workspaceId, webhookSecret } = await server.bootstrap();
    const url = `http://127.0.0.1:${await receiver.listen()}/hook`;
    const endpoint = await server.request('POST', '/v1/webhook-endpoints', { key, body: { url, event_types: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key });
    expect(ping.status, ping.text).toBe(202);
    const callback = { event: 'taskDeleted', task_id: 'task-1', webhook_id: '7fa3ec74-69a8-4530-a251-8a13730bd204', history_items: [] };
    expect((await postTaskTool(server, workspaceId, webhookSecret, callback)).status).toBe(200);

    // The schema before the migration: no lane, and (as the delivery job enqueued them) no workspace.
    // A delivery job whose delivery is gone (its endpoint was deleted) stays general: nothing to send.
    const db = server.ctx.db;
    const unmigrated = db as unknown as Kysely<unknown>;
    await jobLanes.down(unmigrated);
    await db.updateTable('jobs').set({ workspace_id: null }).where('name', '=', 'webhooks.deliver').execute();
    await jobLanes.up(unmigrated);

    const jobs = await db.selectFrom('jobs').select(['name', 'lane', 'workspace_id']).orderBy('name').execute();
    expect(jobs).toEqual([
      { name: 'webhooks.deliver', lane: 'outbound', workspace_id: workspaceId },
      { name: 'webhooks.mirror_task_status', lane: 'general', workspace_id: workspaceId },
    ]);

    let worker: Worker | undefined;
    try {
      worker = startTestWorker(server);
      await waitFor(async () => receiver.received.length === 1, 'the delivery enqueued before the upgrade');
      expect(receiver.received[0]!.headers['verdict-event-id']).toBe(ping.body.event_id);
    } finally {
      await worker?.stop(0);
    }
  });
});
