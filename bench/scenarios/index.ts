import type { Scenario } from '../lib/harness.js';
import { assignHit, assignHitBesideEvents, assignMiss } from './assignment.js';
import { trackEventBatch, trackSingleEvent } from './events.js';
import { currentWorkspace } from './foundation.js';
import { createHtmlRender, createPdfRender } from './templates.js';

/** Every scenario by name; add new ones here. */
export const scenarios: Scenario[] = [
  currentWorkspace,
  assignHit,
  assignHitBesideEvents,
  assignMiss,
  trackSingleEvent,
  trackEventBatch,
  createHtmlRender,
  createPdfRender,
];
