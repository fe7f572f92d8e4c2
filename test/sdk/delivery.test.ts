import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type VerdictError } from '../../sdk/src/index.js';
import type { IngestSetup } from '../events/support.js';
import { startFaultProxy, type Fault, type FaultProxy } from './fault-proxy.js';
import { countingFetch, startSdkServer, storedEventIds } from './support.js';

// Tracked events reach a real Verdict exactly once, through 503s, 429s with Retry-After, and
// connections cut after Verdict stored the batch; refused events are reported, not retried.

const EVENTS = 10_000;

/** 503 for the first 4 requests, 429 for the next 3, then every 6th connection is cut after the answer. */
function outagePlan(n: number): Fault {
  if (n <= 4) return 'unavailable';
  if (n <= 7) return 'rate-limited';
  return n % 6 === 0 ? 'cut-after-answer' : 'forward';
}

function tally<T>(items: T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

interface FaultRun {
  tracked: string[];
  stored: string[];
  errors: VerdictError[];
  stats: ReturnType<ReturnType<typeof createClient>['stats']>;
  proxy: FaultProxy;
}

/** Tracks EVENTS events through a proxy that answers 503s, 429s and cuts connections, and records what happened. */
async function trackThroughFaults(setup: IngestSetup): Promise<FaultRun> {
  // Other tests of this file store events in the same workspace; this run counts only what it adds.
  const before = new Set(await storedEventIds(setup));
  const proxy = await startFaultProxy(setup.server.url, outagePlan);
  const errors: VerdictError[] = [];
  const sdk = createClient({
    baseUrl: proxy.url,
    apiKey: setup.clientKey,
    maxQueue: 20_000,
    retry: { baseDelayMs: 50, maxDelayMs: 2_000 },
    onError: (error) => errors.push(error),
  });
  const tracked: string[] = [];
  for (let n = 0; n < EVENTS; n += 1) {
    tracked.push(sdk.track('purchase', `unit-${n % 997}`, { n }));
    // An application does other work between events: let the flushes run.
    if (n % 250 === 249) await new Promise((resolve) => setImmediate(resolve));
  }
  await sdk.close({ timeoutMs: 60_000 });
  const stored = (await storedEventIds(setup)).filter((id) => !before.has(id));
  return { tracked, stored, errors, stats: sdk.stats(), proxy };
}

describe('@verdict/sdk event delivery', () => {
  let setup: IngestSetup;
  let run: FaultRun | undefined;

  beforeAll(async () => {
    setup = await startSdkServer();
    run = await trackThroughFaults(setup);
  }, 150_000);
  afterAll(async () => {
    await run?.proxy.close();
    await setup?.stopDrainer();
    await setup?.server.close();
  });

  it(`stores ${EVENTS} events exactly once through 503s, 429s and cut connections`, () => {
    const { tracked, stored, errors, stats, proxy } = run as FaultRun;
    const duplicates = [...tally(stored).values()].filter((count) => count > 1).length;
    const faults = tally(proxy.requests.map((request) => request.fault));
    const sentEvents = proxy.requests.reduce((sum, request) => sum + request.ids.length, 0);
    console.log(
      `[sdk fault test] tracked ${tracked.length}; sent ${sentEvents} events in ${proxy.requests.length} requests ` +
        `(${faults.get('unavailable') ?? 0}× 503, ${faults.get('rate-limited') ?? 0}× 429, ${faults.get('cut-after-answer') ?? 0} cut after the answer, ` +
        `${stats.retries} retries); stored ${stored.length}, distinct ${new Set(stored).size}, duplicates ${duplicates}`,
    );
    expect(errors).toEqual([]);
    expect(duplicates).toBe(0);
    expect([...stored].sort()).toEqual([...tracked].sort());
    expect(stats).toMatchObject({ tracked: EVENTS, sent: EVENTS, rejected: 0, dropped: 0, abandoned: 0, queued: 0, inFlight: 0 });
    // Every fault happened, and each was retried: more events crossed the proxy than were tracked.
    expect(faults.get('cut-after-answer')).toBeGreaterThan(0);
    expect(sentEvents).toBeGreaterThan(EVENTS);
  });

  it('waits at least Retry-After before repeating a batch that got a 429', () => {
    const requests = run?.proxy.requests ?? [];
    const limited = requests.filter((request) => request.fault === 'rate-limited');
    expect(limited.length).toBe(3);
    for (const answer of limited) {
      const retry = requests.find((later) => later.receivedAt >= answer.receivedAt && later !== answer && later.ids[0] === answer.ids[0]);
      expect(retry).toBeDefined();
      expect((retry?.receivedAt ?? 0) - answer.receivedAt).toBeGreaterThanOrEqual(1_000);
    }
  });

  it('reports events refused in a 202 through onError and does not send them again', async () => {
    const counter = countingFetch();
    const errors: VerdictError[] = [];
    const sdk = createClient({ baseUrl: setup.server.url, apiKey: setup.clientKey, fetch: counter.fetch, onError: (error) => errors.push(error) });
    const good = sdk.track('signup', 'refused-unit', { plan: 'pro' });
    const badKey = sdk.track('Not A Key!', 'refused-unit');
    const tooOld = sdk.track('signup', 'refused-unit', undefined, new Date(Date.now() - 40 * 86_400_000));
    await sdk.close();
    expect(counter.count()).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'rejected' });
    expect(errors[0]?.rejected.map(({ event }) => event.client_event_id)).toEqual([badKey, tooOld]);
    expect(errors[0]?.rejected.every(({ reason }) => reason.length > 0)).toBe(true);
    expect(sdk.stats()).toMatchObject({ tracked: 3, sent: 1, rejected: 2 });
    expect(await storedEventIds(setup)).toContain(good);
  });

  it('refuses an event JSON cannot encode without holding up the rest of its batch', async () => {
    const errors: VerdictError[] = [];
    const sdk = createClient({ baseUrl: setup.server.url, apiKey: setup.clientKey, onError: (error) => errors.push(error) });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const before = sdk.track('signup', 'cyclic-unit');
    const broken = sdk.track('signup', 'cyclic-unit', cyclic);
    const after = sdk.track('signup', 'cyclic-unit', { amount: BigInt(1) as unknown as number });
    const last = sdk.track('signup', 'cyclic-unit', undefined, new Date('not a date'));
    await sdk.close();
    expect(errors.map((error) => error.kind)).toEqual(['rejected', 'rejected']);
    expect(errors[0]?.rejected.map(({ event }) => event.client_event_id)).toEqual([broken, after]);
    expect(errors[0]?.message).toMatch(/JSON/);
    // The invalid date is sent as it is and refused by the server, with its reason.
    expect(errors[1]?.rejected.map(({ event }) => event.client_event_id)).toEqual([last]);
    expect(await storedEventIds(setup)).toContain(before);
    expect(sdk.stats()).toMatchObject({ tracked: 4, sent: 1, rejected: 3, queued: 0 });
  });

  it('drops the oldest events when the queue is full, counts them and reports once', async () => {
    const errors: VerdictError[] = [];
    const sdk = createClient({
      baseUrl: setup.server.url,
      apiKey: setup.clientKey,
      maxQueue: 50,
      maxBatch: 500,
      flushIntervalMs: 60_000,
      onError: (error) => errors.push(error),
    });
    const ids = Array.from({ length: 80 }, (_, n) => sdk.track('view', `overflow-${n}`));
    expect(sdk.stats()).toMatchObject({ tracked: 80, queued: 50, dropped: 30 });
    expect(errors.map((error) => error.kind)).toEqual(['dropped']);
    await sdk.flush();
    const stored = new Set(await storedEventIds(setup));
    expect(ids.filter((id) => stored.has(id))).toEqual(ids.slice(30));
    await sdk.close();
  });

  it('gives up on what it cannot send when close() times out, and says so', async () => {
    const errors: VerdictError[] = [];
    const sdk = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: setup.clientKey,
      retry: { baseDelayMs: 20, maxDelayMs: 50 },
      onError: (error) => errors.push(error),
    });
    for (let n = 0; n < 5; n += 1) sdk.track('view', `offline-${n}`);
    const started = Date.now();
    await sdk.close({ timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(errors.map((error) => [error.kind, error.count])).toEqual([['abandoned', 5]]);
    expect(sdk.stats()).toMatchObject({ abandoned: 5, sent: 0, queued: 0, inFlight: 0 });
    expect(sdk.stats().retries).toBeGreaterThan(0);
  });
});
