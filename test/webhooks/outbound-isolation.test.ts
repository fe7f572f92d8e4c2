// One workspace's endpoints cannot slow another's work (docs/webhooks.md "Deliveries have a pool of
// their own"): endpoints that accept a connection and never answer, in one workspace, with events
// fanned out to them, while another workspace's render, task-tool mirror and delivery complete
// within the documented bound; and one workspace's deliveries never hold more than their share.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import type { Worker } from '../../src/jobs/worker.js';
import { createExperiment } from '../analysis/support.js';
import { describeEach } from '../support/describe-each.js';
import { startTestWorker } from '../support/jobs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver } from './receiver.js';
import { postTaskTool, waitFor } from './support.js';

/** The bound docs/webhooks.md states: another workspace's job finishes this soon after it is asked for. */
const BOUND_MS = 5_000;
/** Each delivery to the silent receiver hangs this long (the default timeout), twice the bound. */
const DELIVERY_TIMEOUT_MS = 10_000;
const NOISY_ENDPOINTS = 12;

/** An HTTP server that reads each request and never answers; it counts the requests it holds. */
class SilentReceiver {
  inFlight = 0;
  maxInFlight = 0;
  readonly #server = http.createServer((request) => {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    request.socket.once('close', () => (this.inFlight -= 1));
    request.resume();
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function statusCallback(taskId: string, after: string) {
  const item = { id: `hist-${taskId}`, type: 1, date: String(Date.now()), field: 'status', before: { status: 'to do' }, after: { status: after } };
  return { event: 'taskStatusUpdated', task_id: taskId, webhook_id: '7fa3ec74-69a8-4530-a251-8a13730bd204', history_items: [item] };
}

/** How long `done` took to give a value after `start`, waiting at most twice the bound. */
async function elapsedUntil(start: number, done: () => Promise<boolean>, what: string): Promise<number> {
  await waitFor(done, what, 2 * BOUND_MS + DELIVERY_TIMEOUT_MS).catch(() => undefined);
  return Date.now() - start;
}

describeEach('outbound deliveries beside other workspaces’ work', {}, ({ dialect }) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A server with the defaults of `verdict serve` but for the given job settings; private addresses allowed. */
  async function serverWith(jobs?: Partial<Config['jobs']>): Promise<TestServer> {
    const defaults = loadConfig({});
    const config: Partial<Config> = {
      outbound: { ...defaults.outbound, timeoutMs: DELIVERY_TIMEOUT_MS, allowPrivateNetworks: true },
      jobs: { ...defaults.jobs, ...jobs },
    };
    const server = await startTestServer(dialect, { config });
    cleanups.push(() => server.close());
    return server;
  }

  function worker(server: TestServer): Worker {
    const started = startTestWorker(server, { concurrency: server.ctx.config.jobs.concurrency, leaseMs: 30_000, wakeOnEnqueue: true });
    cleanups.push(() => started.stop(0));
    return started;
  }

  async function silentReceiver(): Promise<{ receiver: SilentReceiver; url: string }> {
    const receiver = new SilentReceiver();
    const url = await receiver.listen();
    // Closed before the worker stops (cleanups run in reverse), so the hanging deliveries end.
    cleanups.push(() => receiver.close());
    return { receiver, url };
  }

  /** A workspace with endpoints at `url` that subscribe to everything, and an experiment start fanning an event out to them. */
  async function noisyWorkspace(server: TestServer, url: string): Promise<void> {
    const { key, environmentId } = await server.bootstrap('Noisy');
    for (let index = 0; index < NOISY_ENDPOINTS; index += 1) {
      const created = await server.request('POST', '/v1/webhook-endpoints', { key, body: { url: `${url}/${index}`, event_types: ['*'] } });
      expect(created.status, created.text).toBe(201);
    }
    await createExperiment(server, key, {
      key: 'noisy',
      environment_id: environmentId,
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
  }

  it(`renders and mirrors a task status for another workspace within ${BOUND_MS / 1000} s while one workspace's endpoints never answer`, async () => {
    const server = await serverWith();
    const { receiver, url } = await silentReceiver();
    worker(server);
    const quiet = await server.bootstrap('Quiet');
    const api = (method: string, path: string, body?: unknown) => server.request(method, path, { key: quiet.key, body });
    const template = await api('POST', '/v1/templates', { name: 'Receipt', body: '# Receipt {{number}}' });
    expect((await api('POST', `/v1/templates/${template.body.id}/versions`)).status).toBe(201);
    expect((await api('PUT', '/v1/task-tool/settings', { status_mapping: { 'in progress': 'working' } })).status).toBe(200);
    const lead = await api('POST', '/v1/leads', { name: 'Ada', task_tool_task_id: 'task-quiet' });
    expect(lead.status, lead.text).toBe(201);

    await noisyWorkspace(server, url);
    await waitFor(async () => receiver.inFlight >= 2, 'the noisy workspace’s deliveries to hang');

    const renderAsked = Date.now();
    const render = await api('POST', '/v1/renders', { template_id: template.body.id, formats: ['html'], data: { number: 42 } });
    expect(render.status, render.text).toBe(202);
    const renderMs = await elapsedUntil(renderAsked, async () => (await api('GET', `/v1/renders/${render.body.id}`)).body.status === 'resolved', 'the render');

    const mirrorAsked = Date.now();
    const callback = await postTaskTool(server, quiet.workspaceId, quiet.webhookSecret, statusCallback('task-quiet', 'In Progress'));
    expect(callback.status, callback.text).toBe(200);
    const mirrorMs = await elapsedUntil(mirrorAsked, async () => (await api('GET', `/v1/leads/${lead.body.id}`)).body.status === 'working', 'the mirror');

    expect(renderMs, 'the render took').toBeLessThan(BOUND_MS);
    expect(mirrorMs, 'the mirror took').toBeLessThan(BOUND_MS);
    expect(receiver.inFlight, 'the noisy deliveries still hang').toBeGreaterThan(0);
  });

  it(`delivers another workspace's event within ${BOUND_MS / 1000} s while one workspace's backlog fills the pool, across two workers`, async () => {
    const server = await serverWith({ outbound: { concurrency: 4, perWorkspace: 2 } });
    const { receiver: silent, url } = await silentReceiver();
    const answering = new Receiver();
    const answeringUrl = `http://127.0.0.1:${await answering.listen()}/quiet`;
    cleanups.push(() => answering.close());
    // Two workers of four delivery slots each, as two `verdict worker` processes would be.
    worker(server);
    worker(server);
    const quiet = await server.bootstrap('Quiet');
    const endpoint = await server.request('POST', '/v1/webhook-endpoints', { key: quiet.key, body: { url: answeringUrl, event_types: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(201);

    await noisyWorkspace(server, url);
    await waitFor(async () => silent.inFlight >= 2, 'the noisy workspace’s deliveries to hang');

    const pinged = Date.now();
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key: quiet.key });
    expect(ping.status, ping.text).toBe(202);
    const deliveredMs = await elapsedUntil(pinged, async () => answering.received.length > 0, 'the quiet workspace’s delivery');

    expect(deliveredMs, 'the quiet workspace’s delivery took').toBeLessThan(BOUND_MS);
    expect(silent.maxInFlight, 'the noisy workspace’s deliveries at once, across both workers').toBe(2);
  });
});

describe('the delivery pool’s settings', () => {
  it('reads plain integers from 1, defaults to 16 deliveries per process and 4 per workspace, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).jobs.outbound).toEqual({ concurrency: 16, perWorkspace: 4 });
    expect(loadConfig({ VERDICT_WEBHOOK_CONCURRENCY: '32', VERDICT_WEBHOOK_WORKSPACE_CONCURRENCY: '1' }).jobs.outbound).toEqual({
      concurrency: 32,
      perWorkspace: 1,
    });
    for (const name of ['VERDICT_WEBHOOK_CONCURRENCY', 'VERDICT_WEBHOOK_WORKSPACE_CONCURRENCY']) {
      for (const raw of ['0', '-1', '1.5', '1e3', '0x10', '0b11', ' 7 ', '8 slots', '99999999999999999999']) {
        expect(() => loadConfig({ [name]: raw }), `${name}=${JSON.stringify(raw)}`).toThrow(ConfigError);
        expect(() => loadConfig({ [name]: raw }), `${name}=${JSON.stringify(raw)}`).toThrow(new RegExp(`^${name} `));
      }
    }
  });
});
