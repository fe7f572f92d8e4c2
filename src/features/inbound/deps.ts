import type { AppContext } from '../../context.js';
import type { IngestOutcome } from '../events/service.js';

/**
 * Reads its source through webhook-sources/read.ts and opens the source's secrets (secrets);
 * the events a delivery carries go in through the events slice's ingest, given by the root.
 */
export type InboundDeps = Pick<AppContext, 'config' | 'db' | 'clock' | 'secrets' | 'logger' | 'jobs'> & {
  ingestEvents(workspaceId: string, inputs: readonly unknown[]): Promise<IngestOutcome[]>;
};
