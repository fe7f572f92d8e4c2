// What other slices may know of webhook sources: the inbound slice resolves a source by its slug.
export type { WebhookSourceRow } from './store.js';
export { findWebhookSourceBySlug } from './store.js';
