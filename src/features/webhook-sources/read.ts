// What other slices may know of webhook sources: the inbound slice resolves a source by its
// slug and verifies a delivery against the source's secrets.
export type { WebhookSourceRow } from './store.js';
export { findWebhookSourceBySlug } from './store.js';
export { verifyingSecrets } from './service.js';
