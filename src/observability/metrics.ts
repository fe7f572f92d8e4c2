import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { addTally, WRITER_OPERATIONS, type WriterStats } from '../buffer/writer-stats.js';
import { HttpMetrics } from './http-metrics.js';

/** The in-process caches whose hit ratio is exported. */
export type CacheName = 'api_keys' | 'experiment_definitions' | 'segment_rules' | 'sticky_assignments';

/** What a cache calls on each lookup; the counters behind it make the hit ratio in PromQL. */
export interface CacheStats {
  hit(): void;
  miss(): void;
}

/** The label of requests no route matched: one series for every unknown path, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const SNAPSHOT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The figures one Verdict app counts as it works, in a registry of its own (not prom-client's
 * global one: tests run many apps in one process, and each must count only its own requests).
 * Figures read from the database at scrape time are added by `registerScrapeGauges`.
 */
export class AppMetrics {
  readonly registry = new Registry();
  readonly #http: HttpMetrics;
  /** Plain tallies, copied into their counter at scrape time: a lookup costs an increment, not a label hash. */
  readonly #cacheTallies = new Map<CacheName, { hits: number; misses: number }>();
  /** The sticky cache's entries and capacity, once an assigner exists (watchStickyCache). */
  #sticky: { entries: () => number; capacity: number } | null = null;
  readonly eventsBuffered: Counter;
  readonly eventsDrained: Counter;
  readonly #snapshots: Counter<'trigger'>;
  readonly #snapshotDuration: Histogram<'trigger'>;
  /** The writer thread's tallies: totals since start, and the longest piece since the last scrape. */
  readonly #writer = new Map(WRITER_OPERATIONS.map((operation) => [operation, { count: 0, totalMs: 0, longestMs: 0 }]));

  constructor() {
    const registers = [this.registry];
    this.#http = new HttpMetrics(this.registry);
    const tallies = this.#cacheTallies;
    new Counter({
      name: 'verdict_cache_requests_total',
      help: 'Lookups in the in-process caches, by cache and result (hit or miss)',
      labelNames: ['cache', 'result'],
      registers,
      collect() {
        this.reset();
        for (const [cache, tally] of tallies) {
          this.inc({ cache, result: 'hit' }, tally.hits);
          this.inc({ cache, result: 'miss' }, tally.misses);
        }
      },
    });
    this.eventsBuffered = new Counter({
      name: 'verdict_events_buffered_total',
      help: 'Events acknowledged into the event buffer (replays of a known client_event_id excluded)',
      registers,
    });
    this.eventsDrained = new Counter({
      name: 'verdict_events_drained_total',
      help: 'Events moved from the event buffer into the events table by this process',
      registers,
    });
    this.#snapshots = new Counter({
      name: 'verdict_analysis_snapshots_total',
      help: 'Analysis snapshots computed and stored, by trigger',
      labelNames: ['trigger'],
      registers,
    });
    this.#snapshotDuration = new Histogram({
      name: 'verdict_analysis_snapshot_duration_seconds',
      help: 'Time to compute and store one analysis snapshot, by trigger',
      labelNames: ['trigger'],
      buckets: SNAPSHOT_BUCKETS,
      registers,
    });
    this.#registerWriterMetrics(registers);
    this.#registerStickyMetrics(registers);
  }

  #registerStickyMetrics(registers: Registry[]): void {
    const sticky = () => this.#sticky;
    new Gauge({
      name: 'verdict_sticky_cache_entries',
      help: 'Stored assignments held by the sticky cache (off the JavaScript heap); when it stays at verdict_sticky_cache_capacity_entries, misses evict',
      registers,
      collect() {
        this.set(sticky()?.entries() ?? 0);
      },
    });
    new Gauge({
      name: 'verdict_sticky_cache_capacity_entries',
      help: 'The most stored assignments the sticky cache holds (VERDICT_STICKY_CACHE_SIZE)',
      registers,
      collect() {
        this.set(sticky()?.capacity ?? 0);
      },
    });
  }

  /** Reports the sticky cache's fill on /metrics. */
  watchStickyCache(entries: () => number, capacity: number): void {
    this.#sticky = { entries, capacity };
  }

  #registerWriterMetrics(registers: Registry[]): void {
    const writer = this.#writer;
    const labelNames = ['operation'];
    new Counter({
      name: 'verdict_buffer_writer_seconds_total',
      help: "Time the event buffer's writer thread (embedded SQLite) spent in each kind of work",
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [operation, tally] of writer) this.inc({ operation }, tally.totalMs / 1000);
      },
    });
    new Counter({
      name: 'verdict_buffer_writer_operations_total',
      help: "Pieces of work the event buffer's writer thread ran, by kind (a group commit of appends, a drain, a write task, a purge, a timed checkpoint)",
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [operation, tally] of writer) this.inc({ operation }, tally.count);
      },
    });
    new Gauge({
      name: 'verdict_buffer_writer_longest_seconds',
      help: "The longest piece of each kind of work on the event buffer's writer thread since the previous scrape (what a queued event waited behind)",
      labelNames,
      registers,
      collect() {
        for (const [operation, tally] of writer) {
          this.set({ operation }, tally.longestMs / 1000);
          tally.longestMs = 0;
        }
      },
    });
  }

  /** Adds the writer thread's latest tallies (ThreadBufferWriter.onStats). */
  observeWriter(stats: WriterStats): void {
    for (const operation of WRITER_OPERATIONS) {
      const taken = stats[operation];
      const tally = this.#writer.get(operation);
      if (taken && tally) addTally(tally, taken);
    }
  }

  /** Called once per response (the only per-request cost of metrics). */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.#http.observe(method, route, statusCode, seconds);
  }

  /** The tally of one cache; its series exist from the start (at 0), so rate() works before the first lookup. */
  cache(name: CacheName): CacheStats {
    const tally = this.#cacheTallies.get(name) ?? { hits: 0, misses: 0 };
    this.#cacheTallies.set(name, tally);
    return {
      hit: () => {
        tally.hits += 1;
      },
      miss: () => {
        tally.misses += 1;
      },
    };
  }

  observeSnapshot(trigger: string, seconds: number): void {
    this.#snapshots.inc({ trigger });
    this.#snapshotDuration.observe({ trigger }, seconds);
  }
}
