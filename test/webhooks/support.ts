import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { insertEvents } from '../../src/features/events/store.js';
import type { Worker } from '../../src/jobs/worker.js';
import { startTestWorker } from '../support/jobs.js';
import type { Clock } from '../../src/lib/time.js';
import type { DialectName } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type ApiResponse, type TestServer } from '../support/server.js';
import { ManualClock } from '../support/clock.js';
import { waitFor as pollUntil } from '../support/wait-for.js';

export { ManualClock };

export const HOUR_MS = 60 * 60 * 1000;

// The sender's side, written from the spec and not from src/features/inbound/signature.ts:
// v1 = hex HMAC-SHA256 over "<t>.<raw body>" keyed with the source's inbound secret.
export function senderSignature(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), Buffer.from(body)]))
    .digest('hex');
}

/** The same, computed by the openssl command line tool: a wholly independent implementation. */
export function opensslSignature(secret: string, t: number, body: string): string {
  const output = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-hex'], { input: `${t}.${body}` }).toString('utf8');
  const match = /([0-9a-f]{64})\s*$/.exec(output.trim());
  if (!match?.[1]) throw new Error(`unexpected openssl output: ${output}`);
  return match[1];
}

/** The task tool's side: hex HMAC-SHA256 of the raw body keyed with the workspace webhook secret. */
export function taskToolSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export function secondsOf(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}

export interface InboundPost {
  /** Sent as is (a string) or JSON-encoded. */
  body: unknown;
  secret?: string;
  t?: number;
  /** Replaces the computed signature header (null: no header). */
  signature?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

/** Posts to an inbound URL the way a sender with only the source secret would. */
export async function postInbound(server: TestServer, clock: Clock, path: string, post: InboundPost): Promise<ApiResponse> {
  const raw = typeof post.body === 'string' ? post.body : JSON.stringify(post.body);
  const t = post.t ?? secondsOf(clock);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...post.headers };
  const signature = post.signature === undefined ? `t=${t},v1=${senderSignature(post.secret ?? '', t, raw)}` : post.signature;
  if (signature !== null) headers['x-service-signature'] = signature;
  if (post.idempotencyKey !== undefined) headers['idempotency-key'] = post.idempotencyKey;
  return server.request('POST', path, { rawBody: raw, headers });
}

export async function postTaskTool(server: TestServer, workspaceId: string, secret: string | null, body: unknown, signature?: string): Promise<ApiResponse> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const value = signature ?? (secret === null ? undefined : taskToolSignature(secret, raw));
  if (value !== undefined) headers['x-signature'] = value;
  return server.request('POST', `/webhooks/task-tool/${workspaceId}`, { rawBody: raw, headers });
}

/** Moves everything buffered into the events table, as the drainer does. */
export async function drainAll(server: TestServer): Promise<void> {
  for (;;) {
    const { more } = await server.ctx.buffer.drain(insertEvents, 5_000);
    if (!more) return;
  }
}

export async function storedEvents(server: TestServer, workspaceId: string) {
  return server.ctx.db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

export async function createSource(server: TestServer, key: string, slug: string, extra: Record<string, unknown> = {}) {
  const created = await server.request('POST', '/v1/webhook-sources', { key, body: { slug, name: `Source ${slug}`, ...extra } });
  if (created.status !== 201) throw new Error(`creating a source failed: ${created.text}`);
  return created.body as { id: string; slug: string; inbound_path: string; inbound_secret: string };
}

export async function auditOf(server: TestServer, key: string, query: string) {
  const response = await server.request('GET', `/v1/audit?${query}`, { key });
  if (response.status !== 200) throw new Error(`reading the audit log failed: ${response.text}`);
  return response.body.data as Array<{ action: string; actor_id: string | null; target_id: string; payload: any }>;
}

/** A worker on the test server's database and clock, woken by enqueues on this process. */
export function startWorker(server: TestServer): Worker {
  return startTestWorker(server, { leaseMs: 5_000, wakeOnEnqueue: true });
}

/** The shared poll (support/wait-for.ts) with what is awaited named first, as the webhook tests call it. */
export function waitFor<T>(probe: () => Promise<T | undefined | false | null>, what: string, timeoutMs = 10_000): Promise<T> {
  return pollUntil(probe, timeoutMs, what);
}

/** Waits until every job of the name has finished, and returns the finished ones. */
export async function jobsSettled(server: TestServer, name: string) {
  return waitFor(async () => {
    const rows = await server.ctx.db.selectFrom('jobs').selectAll().where('name', '=', name).execute();
    return rows.every((row) => row.status === 'succeeded' || row.status === 'failed') ? rows : null;
  }, `jobs ${name} to finish`);
}

export interface WebhookEnv {
  server: TestServer;
  clock: ManualClock;
  dialect: DialectName;
  /** The bootstrapped workspace's server key, id and webhook secret. */
  key: string;
  keyId: string;
  workspaceId: string;
  webhookSecret: string;
}

export interface WebhookSuiteOptions {
  /**
   * 'suite' (the default): one workspace for the whole suite, for suites whose `beforeAll` sets up in it.
   * 'test': a fresh workspace before every test, so no test sees the sources, leads, settings or audit
   * entries another test made there.
   */
  workspace?: 'suite' | 'test';
}

/** Runs a suite on every database (see describeEach), each with its own server, workspace and manual clock. */
export function describeWebhooks(name: string, suite: (env: () => WebhookEnv) => void): void;
export function describeWebhooks(name: string, options: WebhookSuiteOptions, suite: (env: () => WebhookEnv) => void): void;
export function describeWebhooks(
  name: string,
  optionsOrSuite: WebhookSuiteOptions | ((env: () => WebhookEnv) => void),
  suiteIfOptions?: (env: () => WebhookEnv) => void,
): void {
  const options = typeof optionsOrSuite === 'function' ? {} : optionsOrSuite;
  const suite = typeof optionsOrSuite === 'function' ? optionsOrSuite : suiteIfOptions;
  if (!suite) throw new Error('describeWebhooks needs a suite');
  describeEach(name, {}, ({ dialect }) => {
    let env: WebhookEnv | undefined;
    const useWorkspace = async (server: TestServer) => {
      const boot = await server.bootstrap();
      return { key: boot.key, keyId: boot.keyId, workspaceId: boot.workspaceId, webhookSecret: boot.webhookSecret };
    };
    beforeAll(async () => {
      const clock = new ManualClock();
      const server = await startTestServer(dialect, { clock });
      env = { server, clock, dialect, ...(await useWorkspace(server)) };
    });
    if (options.workspace === 'test') {
      beforeEach(async () => {
        if (env) env = { ...env, ...(await useWorkspace(env.server)) };
      });
    }
    afterAll(async () => {
      await env?.server.close();
    });
    suite(() => {
      if (!env) throw new Error('the webhook test server has not started');
      return env;
    });
  });
}
