import { Counter, Histogram, Registry } from 'prom-client';

/** The in-process caches whose hit ratio is exported. */
export type CacheName = 'api_keys' | 'experiment_definitions' | 'segment_rules' | 'sticky_assignments';

/** What a cache calls on each lookup; the counters behind it make the hit ratio in PromQL. */
export interface CacheStats {
  hit(): void;
  miss(): void;
}

/** The label of requests no route matched: one series for every unknown path, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds; the hot paths answer in well under a millisecond, renders and analysis in seconds. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SNAPSHOT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The figures one Verdict app counts as it works, in a registry of its own (not prom-client's
 * global one: tests run many apps in one process, and each must count only its own requests).
 * Figures read from the database at scrape time are added by `registerDatabaseGauges`.
 */
export class AppMetrics {
  readonly registry = new Registry();
  readonly #httpRequests: Counter<'method' | 'route' | 'status_code'>;
  readonly #httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly #cacheLookups: Counter<'cache' | 'result'>;
  readonly eventsBuffered: Counter;
  readonly eventsDrained: Counter;
  readonly #snapshots: Counter<'trigger'>;
  readonly #snapshotDuration: Histogram<'trigger'>;

  constructor() {
    const registers = [this.registry];
    const httpLabels = ['method', 'route', 'status_code'] as const;
    this.#httpRequests = new Counter({ name: 'verdict_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status code', labelNames: httpLabels, registers });
    this.#httpDuration = new Histogram({
      name: 'verdict_http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its response, by method, route pattern and status code',
      labelNames: httpLabels,
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.#cacheLookups = new Counter({ name: 'verdict_cache_requests_total', help: 'Lookups in the in-process caches, by cache and result (hit or miss)', labelNames: ['cache', 'result'], registers });
    this.eventsBuffered = new Counter({ name: 'verdict_events_buffered_total', help: 'Events acknowledged into the event buffer (replays of a known client_event_id excluded)', registers });
    this.eventsDrained = new Counter({ name: 'verdict_events_drained_total', help: 'Events moved from the event buffer into the events table by this process', registers });
    this.#snapshots = new Counter({ name: 'verdict_analysis_snapshots_total', help: 'Analysis snapshots computed and stored, by trigger', labelNames: ['trigger'], registers });
    this.#snapshotDuration = new Histogram({
      name: 'verdict_analysis_snapshot_duration_seconds',
      help: 'Time to compute and store one analysis snapshot, by trigger',
      labelNames: ['trigger'],
      buckets: SNAPSHOT_BUCKETS,
      registers,
    });
  }

  /** Called once per response (the only per-request cost of metrics). */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    const labels = { method, route, status_code: statusCode };
    this.#httpRequests.inc(labels);
    this.#httpDuration.observe(labels, seconds);
  }

  /** Counters for one cache, bound once so a lookup costs one increment. */
  cache(name: CacheName): CacheStats {
    const hits = this.#cacheLookups.labels(name, 'hit');
    const misses = this.#cacheLookups.labels(name, 'miss');
    // Present from the start (at 0), so rate() and the ratio work before the first lookup.
    hits.inc(0);
    misses.inc(0);
    return { hit: () => hits.inc(), miss: () => misses.inc() };
  }

  observeSnapshot(trigger: string, seconds: number): void {
    this.#snapshots.inc({ trigger });
    this.#snapshotDuration.observe({ trigger }, seconds);
  }
}
