import net from 'node:net';
import { expect, it } from 'vitest';
import { describeEach, type Variant } from '../support/describe-each.js';
import { exitWithin, linesWith, prepareWorkload, runWorkload, startServe, startWorkload, stopLines, underLoad, useSite } from './stopping.js';

// Issue 39: after load, `verdict serve` ignored SIGTERM and ran forever. Its log's exit flush
// (sonic-boom's flushSync) waited for the stdout pipe forever: while the reader did not read it,
// and after the reader had closed it. These tests put the workload on a real `serve`
// process and then stop it with the log's reader stalled, gone, or reading.

// Generous for a loaded machine: before the fix these stops never ended, whatever the deadline.
const TIMEOUT_MS = 15_000;
/** The deadline, the log's bounded exit flush (2 s) and room for a loaded machine. */
const STOP_BOUND_MS = TIMEOUT_MS + 2_000 + 3_000;
const UNITS = 200;
/** Seconds of load on each of the workload's three routes (assign, events, workspace): hundreds of access lines each. */
const LOAD_SECONDS = 0.5;

function suite(variant: Variant) {
  const site = useSite(variant);
  const env = { VERDICT_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) };

  it('a SIGTERM under load ends the process although its log reader stopped reading (the pipe still open)', async () => {
    const serve = await startServe(site(), [], env);
    const workload = await prepareWorkload(serve.url, site().key, UNITS);
    serve.setReader('stalled');
    const load = startWorkload(serve.url, site().key, workload, 5);
    await underLoad(load);
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, STOP_BOUND_MS)).toBe(0);
    load.stop();
    await load.done.catch(() => 0);
  }, 90_000);

  it('a SIGTERM after load ends the process when its log reader goes away during the stop (the pipe closed)', async () => {
    const serve = await startServe(site(), [], env);
    const workload = await prepareWorkload(serve.url, site().key, UNITS);
    serve.setReader('stalled');
    expect(await runWorkload(serve.url, site().key, workload, LOAD_SECONDS)).toBeGreaterThan(0);
    serve.child.kill('SIGTERM');
    // By now the stop itself is over and the process is writing its last lines at exit.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    serve.setReader('gone');
    expect(await exitWithin(serve, STOP_BOUND_MS)).toBe(0);
  }, 90_000);

  it('a SIGTERM after load, delivered twice as to a process group under npm start, stops the process cleanly with its log read', async () => {
    const serve = await startServe(site(), [], env);
    const workload = await prepareWorkload(serve.url, site().key, UNITS);
    expect(await runWorkload(serve.url, site().key, workload, LOAD_SECONDS)).toBeGreaterThan(0);
    serve.child.kill('SIGTERM');
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, STOP_BOUND_MS), stopLines(serve.log())).toBe(0);
    expect(linesWith(serve.log(), 'shutting down')).toEqual([expect.objectContaining({ signal: 'SIGTERM', timeout_ms: TIMEOUT_MS })]);
    expect(linesWith(serve.log(), 'stopped')).toHaveLength(1);
    expect(linesWith(serve.log(), 'second signal during shutdown: exiting now')).toEqual([]);
  }, 90_000);
}

describeEach('stopping verdict serve after issue 39 workload', { dialects: ['sqlite'] }, suite);
describeEach('stopping verdict serve after issue 39 workload', { dialects: ['postgres'], buffers: ['redis'] }, suite);

/** A request whose body never finishes: the HTTP server's close waits for it (Node's request timeout is 5 minutes). */
async function openUnfinishedRequest(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('POST /v1/events HTTP/1.1\r\nHost: verdict\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"event_key":');
  socket.on('error', () => {});
  return socket;
}

describeEach('a stop that cannot finish', { dialects: ['sqlite'] }, (variant) => {
  const site = useSite(variant);

  it('ends at the shutdown deadline with status 1, naming what it was still waiting for', async () => {
    const serve = await startServe(site(), [], { VERDICT_SHUTDOWN_TIMEOUT_MS: '1500' });
    const socket = await openUnfinishedRequest(serve.url);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 1_500 + 2_000 + 3_000)).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(linesWith(serve.log(), 'shutdown deadline passed: exiting without waiting for the rest')).toEqual([
      expect.objectContaining({ level: 50, timeout_ms: 1_500, waiting_for: ['the HTTP server (requests in flight, open connections)'] }),
    ]);
    socket.destroy();
  }, 60_000);

  it('ends at once, with status 1, on a second signal during the stop', async () => {
    const serve = await startServe(site(), [], { VERDICT_SHUTDOWN_TIMEOUT_MS: '60000' });
    const socket = await openUnfinishedRequest(serve.url);
    await new Promise((resolve) => setTimeout(resolve, 200));
    serve.child.kill('SIGTERM');
    // Past the window in which a repeat is the same request delivered twice.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    expect(serve.child.exitCode).toBeNull();
    serve.child.kill('SIGINT');
    expect(await exitWithin(serve, 3_000)).toBe(1);
    expect(linesWith(serve.log(), 'second signal during shutdown: exiting now')).toEqual([
      expect.objectContaining({ signal: 'SIGINT', waiting_for: ['the HTTP server (requests in flight, open connections)'] }),
    ]);
    socket.destroy();
  }, 60_000);
});
