import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { IngestOutcome } from '../events/service.js';
import { registerWebhookJobs } from './jobs.js';
import { inboundRoutes } from './routes.js';

/**
 * Reads its source through webhook-sources/read.ts and opens the source's secrets (secrets);
 * the events a delivery carries go in through the events slice's ingest, given by the root.
 */
export type InboundDeps = Pick<AppContext, 'config' | 'db' | 'clock' | 'secrets' | 'logger' | 'jobs'> & {
  ingestEvents(workspaceId: string, inputs: readonly unknown[]): Promise<IngestOutcome[]>;
};

export interface InboundSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Registers the hourly purge of idempotency keys, deliveries and applied history items (jobs/handlers.ts). */
  registerJobs(): void;
}

export function createInbound(deps: InboundDeps): InboundSlice {
  return { routes: inboundRoutes(deps), registerJobs: () => registerWebhookJobs(deps) };
}
