// A delivery in flight when its worker process is killed with kill -9 is delivered after a new
// worker starts: the job's lease lapses, the attempt runs again, with the same event id (at least
// once; the receiver deduplicates by id).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { spawnVerdict, stopProcess } from '../support/processes.js';
import { Receiver, verifies } from './receiver.js';
import { waitFor } from './support.js';

describeEach('outbound deliveries survive a killed worker', { concurrent: true }, ({ dialect }) => {
  let server: TestServer;
  const receiver = new Receiver();
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    server = await startTestServer(dialect);
  });
  afterAll(async () => {
    for (const worker of workers) await stopProcess(worker, 'SIGKILL');
    await receiver.close();
    await server.close();
  });

  function startWorkerProcess(): ChildProcess {
    const config = server.database.config;
    const child = spawnVerdict(['worker'], {
      VERDICT_DATABASE_URL: config.kind === 'sqlite' ? `sqlite:${config.file}` : config.url,
      VERDICT_DATA_DIR: server.database.dataDir,
      VERDICT_JOB_LEASE_MS: '1000',
      VERDICT_JOB_POLL_MS: '50',
      VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      VERDICT_WEBHOOK_TIMEOUT_MS: '60000',
      VERDICT_LOG_LEVEL: 'error',
    });
    workers.push(child);
    return child;
  }

  it('delivers the event after the restart, with the same event id', async () => {
    const { key } = await server.bootstrap();
    receiver.script.push('hang');
    const url = `http://127.0.0.1:${await receiver.listen()}/hook`;
    const created = await server.request('POST', '/v1/webhook-endpoints', { key, body: { url, event_types: ['*'] } });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { key });
    expect(ping.status).toBe(202);

    const first = startWorkerProcess();
    await waitFor(async () => receiver.received.length === 1, 'the first attempt to arrive', 60_000);
    await stopProcess(first, 'SIGKILL');
    startWorkerProcess();
    await waitFor(async () => receiver.received.length === 2, 'the attempt after the restart', 60_000);

    const delivered = await waitFor(async () => {
      const listed = await server.request('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { key });
      return (listed.body.data as any[]).find((item) => item.status === 'succeeded');
    }, 'the delivery to be recorded');
    expect(delivered).toMatchObject({ id: ping.body.id, event_id: ping.body.event_id, attempts: 1 });
    const ids = receiver.received.map((item) => item.headers['verdict-event-id']);
    expect(ids).toEqual([ping.body.event_id, ping.body.event_id]);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(verifies(receiver.received[1]!.headers['verdict-signature'], receiver.received[1]!.body, created.body.secret)).toBe(true);
  }, 120_000);
});
