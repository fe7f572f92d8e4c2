// What other slices may know of outbound webhooks: the event they publish (the alerts slice
// builds it; publishing goes through the slice's `publish`, given by the root).
export type { EventSummary, OutboundEvent } from './publish.js';
export type { EventType } from './schemas.js';
