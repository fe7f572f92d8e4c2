import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | null = null;

/**
 * prom-client's process figures (CPU, memory, heap, event loop lag, GC, handles), once per
 * process: they describe the process, not an app, and each collection installs event-loop and
 * GC observers that are never removed, so tests that start many apps must not make one each.
 */
export function processMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
