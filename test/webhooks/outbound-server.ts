import { afterAll, beforeAll } from 'vitest';
import type { OutboundConfig } from '../../src/config.js';
import type { Worker } from '../../src/jobs/worker.js';
import type { DialectName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver } from './receiver.js';
import { startWorker } from './support.js';

/** A suite's test server, its workspace's server key, a delivery worker, and a receiver listening on 127.0.0.1. */
export interface OutboundServer {
  server: TestServer;
  key: string;
  worker: Worker;
  receiver: Receiver;
  /** The receiver's port. */
  port: number;
}

/** Deliveries retried after a minute (never within a test), two seconds to connect, answer and resolve a name. */
const DEFAULTS: Omit<OutboundConfig, 'allowPrivateNetworks'> = { retryBaseMs: 60_000, timeoutMs: 2_000, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 };

/**
 * Registers an outbound-webhook suite's set-up (call it inside `describe`): a server on `dialect`
 * with these delivery settings over the defaults above, a bootstrapped workspace, a worker that
 * delivers, and a receiver; all stopped after the suite. `logLines` receives the server's log.
 */
export function useOutboundServer(
  dialect: DialectName,
  outbound: Partial<OutboundConfig> & Pick<OutboundConfig, 'allowPrivateNetworks'>,
  options: { logLines?: string[] } = {},
): OutboundServer {
  const site = { receiver: new Receiver() } as OutboundServer;
  beforeAll(async () => {
    site.server = await startTestServer(dialect, { config: { outbound: { ...DEFAULTS, ...outbound } }, logLines: options.logLines });
    site.key = (await site.server.bootstrap()).key;
    site.worker = startWorker(site.server);
    site.port = await site.receiver.listen();
  });
  afterAll(async () => {
    await site.worker?.stop(0);
    await site.receiver.close();
    await site.server?.close();
  });
  return site;
}
