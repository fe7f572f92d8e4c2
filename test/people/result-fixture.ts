import type { TestServer } from '../support/server.js';
import { assignUnits, compute, createExperiment, createMetric, sendEvents, TWO_ARMS } from '../analysis/support.js';

/** A running two-arm experiment with a conversion metric and one snapshot over 60 units. */
export async function experimentWithResults(server: TestServer, key: string, environmentId: string, experimentKey: string) {
  const metricId = await createMetric(server, key, { key: `${experimentKey}_buys`, event_key: `${experimentKey}_buy`, kind: 'count' });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: experimentKey,
    variants: TWO_ARMS,
    primary_metric_id: metricId,
  });
  const units = Array.from({ length: 60 }, (_, index) => `${experimentKey}-u${index}`);
  await assignUnits(server, key, experimentKey, units);
  const now = Date.now();
  await sendEvents(
    server,
    key,
    units.filter((_, index) => index % 3 === 0).map((unit_id) => ({ event_key: `${experimentKey}_buy`, unit_id, occurred_at: now })),
  );
  const snapshot = await compute(server, key, experiment.id);
  return { experiment, metricId, snapshot };
}
