import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

/**
 * /metrics across the HTTP processes of one `verdict serve --processes N`. The process that a
 * scrape reaches asks the primary; the primary asks every process for its figures (prom-client's
 * JSON form), merges them as prom-client's AggregatorRegistry does (counters and histograms
 * summed, database gauges by max) and sends the text back. prom-client's own cluster helper
 * answers only to a scrape on the primary and fails the whole scrape when one process is slow;
 * here a process that does not answer in time is left out and counted as missing instead.
 */

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

type MetricsMessage =
  | { verdict: 'metrics-request'; id: number }
  | { verdict: 'metrics-collect'; id: number }
  | { verdict: 'metrics-report'; id: number; metrics: MetricsJson[] }
  | { verdict: 'metrics-result'; id: number; text: string | null };

function isMetricsMessage(message: unknown): message is MetricsMessage {
  const verdict = typeof message === 'object' && message !== null ? (message as { verdict?: unknown }).verdict : undefined;
  return typeof verdict === 'string' && verdict.startsWith('metrics-');
}

/** How long the primary waits for the processes' figures (their database reads give up after 2 s). */
const COLLECT_TIMEOUT_MS = 3_000;
/** How long a process waits for the primary's merged answer. */
const REQUEST_TIMEOUT_MS = 5_000;

// ---- HTTP process side ----

const requests = new Map<number, (text: string | null) => void>();
let nextRequestId = 0;
let listening = false;

/**
 * Answers the primary's requests for this process's figures and receives its merged answers.
 * Called once per process, with the registries of the one app it serves.
 */
export function joinClusterMetrics(registries: () => Registry[]): void {
  if (listening) return;
  listening = true;
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    if (message.verdict === 'metrics-result') requests.get(message.id)?.(message.text);
    if (message.verdict === 'metrics-collect') {
      // A collection that fails sends nothing: the primary counts this process as missing.
      Promise.all(registries().map((registry) => registry.getMetricsAsJSON()))
        .then((metrics) => process.send?.({ verdict: 'metrics-report', id: message.id, metrics } satisfies MetricsMessage))
        .catch(() => undefined);
    }
  });
}

/** The whole cluster's figures as Prometheus text, or null when the primary did not answer in time. */
export function clusterMetricsText(): Promise<string | null> {
  const id = nextRequestId++;
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(null), REQUEST_TIMEOUT_MS);
    function finish(text: string | null): void {
      clearTimeout(timer);
      requests.delete(id);
      resolve(text);
    }
    requests.set(id, finish);
    process.send?.({ verdict: 'metrics-request', id } satisfies MetricsMessage);
  });
}

// ---- primary side ----

interface Collection {
  waiting: Set<number>;
  reports: MetricsJson[];
  finish(): void;
}

const collections = new Map<number, Collection>();
let nextCollectionId = 0;

/** Asks every connected process for its figures; resolves with those that answered in time. */
function collect(workers: Worker[]): Promise<{ reports: MetricsJson[]; reporting: number }> {
  const id = nextCollectionId++;
  const connected = workers.filter((worker) => worker.isConnected());
  return new Promise((resolve) => {
    const timer = setTimeout(() => collection.finish(), COLLECT_TIMEOUT_MS);
    const collection: Collection = {
      waiting: new Set(connected.map((worker) => worker.id)),
      reports: [],
      finish() {
        clearTimeout(timer);
        collections.delete(id);
        resolve({ reports: collection.reports, reporting: connected.length - collection.waiting.size });
      },
    };
    collections.set(id, collection);
    for (const worker of connected) worker.send({ verdict: 'metrics-collect', id } satisfies MetricsMessage);
    if (connected.length === 0) collection.finish();
  });
}

async function mergedText(workers: Worker[], expected: number): Promise<string> {
  const { reports, reporting } = await collect(workers);
  const merged = AggregatorRegistry.aggregate(reports);
  const processes = new Gauge({
    name: 'verdict_cluster_processes',
    help: 'HTTP processes of this server whose figures this scrape includes (reporting) or lacks (missing: not answering in time, or restarting)',
    labelNames: ['state'],
    registers: [merged],
  });
  processes.set({ state: 'reporting' }, reporting);
  processes.set({ state: 'missing' }, Math.max(0, expected - reporting));
  return merged.metrics();
}

/**
 * Primary side, for each HTTP process it forks: answers its scrapes with the merged figures of
 * all processes (`expected` is how many there should be) and takes in its reports.
 */
export function answerMetricsRequests(from: Worker, workers: () => Iterable<Worker>, expected: number): void {
  from.on('message', (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    if (message.verdict === 'metrics-report') {
      const collection = collections.get(message.id);
      if (!collection?.waiting.delete(from.id)) return;
      collection.reports.push(...message.metrics);
      if (collection.waiting.size === 0) collection.finish();
    }
    if (message.verdict === 'metrics-request') {
      const answer = (text: string | null) => {
        if (from.isConnected()) from.send({ verdict: 'metrics-result', id: message.id, text } satisfies MetricsMessage);
      };
      mergedText([...workers()], expected).then(answer, () => answer(null));
    }
  });
}
