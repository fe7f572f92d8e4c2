import { afterAll, beforeAll, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import type { Worker } from '../../src/jobs/worker.js';
import type { Clock } from '../../src/lib/time.js';
import { createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import type { DialectName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver, verifies } from '../webhooks/receiver.js';
import { jobsSettled, startWorker } from '../webhooks/support.js';

export const PUBLIC_URL = 'https://verdict.example.com';
export const TWO_ARMS = [
  { key: 'control', weight: 50, is_control: true },
  { key: 'treatment', weight: 50 },
];

/** A server with a worker, a receiver subscribed to every event type (verdict format), and helpers. */
export interface AlertsEnv {
  server: TestServer;
  receiver: Receiver;
  /** The receiver's address (http://127.0.0.1:port): an endpoint of a test posts to base + its own path. */
  base: string;
  /** A fresh workspace per call, with its own endpoint, so tests do not see each other's events. */
  workspace(format?: 'verdict' | 'slack'): Promise<Workspace>;
}

export interface Workspace {
  key: string;
  keyId: string;
  environmentId: string;
  secret: string;
  workspaceId: string;
  /** Every event the receiver got for this workspace, once every delivery job has finished; signatures checked. */
  events(type?: string): Promise<any[]>;
}

export function useAlertsServer(dialect: DialectName, options: { clock?: Clock; config?: Partial<Config> } = {}): () => AlertsEnv {
  let env: AlertsEnv | undefined;
  let worker: Worker;
  beforeAll(async () => {
    const receiver = new Receiver();
    const base = `http://127.0.0.1:${await receiver.listen()}`;
    const server = await startTestServer(dialect, {
      ...(options.clock ? { clock: options.clock } : {}),
      config: {
        outbound: { retryBaseMs: 100, timeoutMs: 2_000, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 },
        publicUrl: PUBLIC_URL,
        ...options.config,
      },
    });
    worker = startWorker(server);
    env = {
      server,
      receiver,
      base,
      async workspace(format = 'verdict') {
        const boot = await server.bootstrap();
        const path = `/hook/${boot.workspaceId}`;
        const created = await server.request('POST', '/v1/webhook-endpoints', { key: boot.key, body: { url: base + path, event_types: ['*'], format } });
        expect(created.status, created.text).toBe(201);
        return {
          key: boot.key,
          keyId: boot.keyId,
          environmentId: boot.environmentId,
          secret: created.body.secret,
          workspaceId: boot.workspaceId,
          async events(type) {
            await jobsSettled(server, 'webhooks.deliver');
            const ours = receiver.received.filter((item) => item.path === path);
            if (format === 'verdict') for (const item of ours) expect(verifies(item.headers['verdict-signature'], item.body, created.body.secret)).toBe(true);
            const bodies = ours.map((item) => ({ ...JSON.parse(item.body), _headers: item.headers }));
            return type ? bodies.filter((body) => body._headers['verdict-event-type'] === type) : bodies;
          },
        };
      },
    };
  });
  afterAll(async () => {
    await worker?.stop(0);
    await env?.receiver.close();
    await env?.server.close();
  });
  return () => {
    if (!env) throw new Error('the alerts server has not started');
    return env;
  };
}

/** An experiment with two arms and the given settings, started. */
export async function startedExperiment(server: TestServer, ws: Workspace, key: string, body: Record<string, unknown> = {}) {
  return createExperiment(server, ws.key, { environment_id: ws.environmentId, key, variants: TWO_ARMS, name: `Experiment ${key}`, ...body });
}

export async function computeNow(server: TestServer, key: string, experimentId: string) {
  const response = await server.request('POST', `/v1/experiments/${experimentId}/results/compute`, { key });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

/**
 * A primary binary metric that treatment wins (80% vs 20% of 100 units each) and a guardrail
 * (errors, lower is better) that treatment makes worse (60% vs 5%): with min_sample_per_variant 50
 * the posterior rule names treatment the winner and the guardrail regressed.
 */
export async function harmfulWinner(server: TestServer, ws: Workspace, key: string, extra: Record<string, unknown> = {}) {
  const converted = await createMetric(server, ws.key, { key: `${key}-converted`, event_key: `${key}.buy`, kind: 'binary' });
  const errors = await createMetric(server, ws.key, { key: `${key}-errors`, event_key: `${key}.error`, kind: 'binary', higher_is_better: false });
  const experiment = await startedExperiment(server, ws, key, {
    primary_metric_id: converted,
    guardrail_metric_ids: [errors],
    decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 50 },
    ...extra,
  });
  const units = await exposeExactly(server, ws.key, experiment, { control: 100, treatment: 100 }, `${key}-u`);
  const now = Date.now();
  const events = [
    ...(units.control ?? []).flatMap((unit_id, i) => [
      ...(i < 20 ? [{ event_key: `${key}.buy`, unit_id, occurred_at: now }] : []),
      ...(i < 5 ? [{ event_key: `${key}.error`, unit_id, occurred_at: now }] : []),
    ]),
    ...(units.treatment ?? []).flatMap((unit_id, i) => [
      ...(i < 80 ? [{ event_key: `${key}.buy`, unit_id, occurred_at: now }] : []),
      ...(i < 60 ? [{ event_key: `${key}.error`, unit_id, occurred_at: now }] : []),
    ]),
  ];
  await sendEvents(server, ws.key, events);
  return { experiment, metrics: { converted, errors } };
}

/**
 * Three arms: `fast` wins the primary metric (80% vs 20%) and leaves the errors guardrail alone
 * (5%), `harmful` is level with the control on the primary metric but makes errors worse (60% vs
 * 5%), 100 units each, min_sample_per_variant 50: the decision points at `fast`, the harm is
 * `harmful`'s.
 */
export async function harmfulLoser(server: TestServer, ws: Workspace, key: string, extra: Record<string, unknown> = {}) {
  const converted = await createMetric(server, ws.key, { key: `${key}-converted`, name: `${key} conversions`, event_key: `${key}.buy`, kind: 'binary' });
  const errors = await createMetric(server, ws.key, {
    key: `${key}-errors`,
    name: `${key} error rate`,
    event_key: `${key}.error`,
    kind: 'binary',
    higher_is_better: false,
  });
  const experiment = await startedExperiment(server, ws, key, {
    variants: [
      { key: 'control', weight: 34, is_control: true },
      { key: 'fast', weight: 33 },
      { key: 'harmful', weight: 33 },
    ],
    primary_metric_id: converted,
    guardrail_metric_ids: [errors],
    decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 50 },
    ...extra,
  });
  const units = await exposeExactly(server, ws.key, experiment, { control: 100, fast: 100, harmful: 100 }, `${key}-u`);
  const rates = { control: { buy: 20, error: 5 }, fast: { buy: 80, error: 5 }, harmful: { buy: 20, error: 60 } };
  const now = Date.now();
  const events = (['control', 'fast', 'harmful'] as const).flatMap((variant) =>
    (units[variant] ?? []).flatMap((unit_id, i) => [
      ...(i < rates[variant].buy ? [{ event_key: `${key}.buy`, unit_id, occurred_at: now }] : []),
      ...(i < rates[variant].error ? [{ event_key: `${key}.error`, unit_id, occurred_at: now }] : []),
    ]),
  );
  await sendEvents(server, ws.key, events);
  return { experiment, metrics: { converted, errors } };
}
