import type { AppContext } from '../../context.js';

/** What the events slice needs: the event buffer, the ingest limits of the configuration, the clock, the logger and the ingest counters. Other slices read it through read.ts. */
export type EventsDeps = Pick<AppContext, 'config' | 'buffer' | 'clock' | 'logger' | 'metrics'>;
