import type { AppContext } from '../../context.js';

/**
 * Endpoints, their sealed signing secrets (secrets), and the durable delivery job (jobs, enqueue).
 * Other slices send through `publish`, in the transaction of the change that caused the event.
 */
export type WebhookEndpointsDeps = Pick<AppContext, 'config' | 'db' | 'seam' | 'clock' | 'secrets' | 'logger' | 'jobs' | 'enqueue'>;
