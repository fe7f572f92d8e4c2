/**
 * What bench:soak records and prints: latencies per kind of request, split by whether an
 * analysis snapshot was being computed while the request was in flight, per 10-second window and
 * over the whole run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LatencyHistogram, Samples, type LatencySummary } from './samples.js';

export type Kind = 'assign' | 'event' | 'batch' | 'bare';
export const KINDS: Kind[] = ['assign', 'event', 'batch', 'bare'];

/** A request over this is a stall (the target: none over 250 ms). */
export const STALL_MS = 250;

/** Latencies by whether a snapshot was in flight: exact Samples per window, histograms over the run. */
export interface Split<Latencies = Samples> {
  quiet: Latencies;
  snapshot: Latencies;
}

const newSplit = (): Split => ({ quiet: new Samples(), snapshot: new Samples() });

// The whole run's latencies in histograms (see LatencyHistogram for why).
const newTotalSplit = (): Split<LatencyHistogram> => ({ quiet: new LatencyHistogram(STALL_MS), snapshot: new LatencyHistogram(STALL_MS) });

export class Recorder {
  window = new Map<Kind, Split>(KINDS.map((kind) => [kind, newSplit()]));
  readonly total = new Map<Kind, Split<LatencyHistogram>>(KINDS.map((kind) => [kind, newTotalSplit()]));
  readonly errors = new Map<string, number>();
  windowErrors = 0;
  /** p99 of each window's requests, for the worst window. */
  readonly windowP99s = new Map<Kind, number[]>(KINDS.map((kind) => [kind, []]));

  record(kind: Kind, ms: number, duringSnapshot: boolean): void {
    const part = duringSnapshot ? 'snapshot' : 'quiet';
    this.window.get(kind)?.[part].add(ms);
    this.total.get(kind)?.[part].add(ms);
  }

  error(what: string): void {
    this.errors.set(what, (this.errors.get(what) ?? 0) + 1);
    this.windowErrors += 1;
  }

  /** Ends the window: returns its samples and starts the next. */
  rollWindow(): { samples: Map<Kind, Split>; errors: number } {
    const samples = this.window;
    const errors = this.windowErrors;
    this.window = new Map(KINDS.map((kind) => [kind, newSplit()]));
    this.windowErrors = 0;
    for (const kind of KINDS) {
      const split = samples.get(kind) as Split;
      const all = new Samples();
      all.addAll(split.quiet);
      all.addAll(split.snapshot);
      if (all.count > 0) this.windowP99s.get(kind)?.push(all.summary().p99);
    }
    return { samples, errors };
  }
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

/** "p50/p99/max" in ms, or "-" without samples. */
export function triple(samples: LatencySummary): string {
  if (samples.count === 0) return '-';
  const { p50, p99, max } = samples.summary();
  return `${ms(p50)}/${ms(p99)}/${ms(max)}`;
}

/** Resident memory of a process and its descendants, in MB (Linux); null elsewhere. */
export function treeRssMb(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    let kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) kb += (treeRssMb(Number(child)) ?? 0) * 1024;
    }
    return kb / 1024;
  } catch {
    return null;
  }
}

/** "12/3": the database's and the event buffer's WAL files in MB (what a checkpoint held off lets grow). */
export function walSizesMb(dataDir: string): string {
  const size = (file: string) => {
    try {
      return (fs.statSync(path.join(dataDir, file)).size / 1e6).toFixed(0);
    } catch {
      return '-';
    }
  };
  return `${size('verdict.sqlite-wal')}/${size('verdict.buffer.sqlite-wal')}`;
}

/** The figures a window reads from the server's /metrics (Prometheus text). */
export interface ServerFigures {
  loopMaxMs: number;
  loopP99Ms: number;
  /** The writer thread's longest piece of work since the previous window, and its kind ("-" without the thread). */
  writerLongest: string;
  heapMb: number;
  stickyHits: number;
  stickyMisses: number;
  /** The API thread's major (mark-compact) collections since start: how many, and their total pause. */
  majorGcCount: number;
  majorGcMs: number;
}

export function parseMetrics(text: string): ServerFigures {
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
  return {
    loopMaxMs: value(/^nodejs_eventloop_lag_max_seconds (\S+)/m) * 1000,
    loopP99Ms: value(/^nodejs_eventloop_lag_p99_seconds (\S+)/m) * 1000,
    writerLongest: writerLongest(text),
    heapMb: value(/^nodejs_heap_size_used_bytes (\S+)/m) / 1e6,
    stickyHits: value(/^verdict_cache_requests_total\{cache="sticky_assignments",result="hit"\} (\S+)/m),
    stickyMisses: value(/^verdict_cache_requests_total\{cache="sticky_assignments",result="miss"\} (\S+)/m),
    majorGcCount: value(/^nodejs_gc_duration_seconds_count\{kind="major"\} (\S+)/m) || 0,
    majorGcMs: (value(/^nodejs_gc_duration_seconds_sum\{kind="major"\} (\S+)/m) || 0) * 1000,
  };
}

/** "38 drain": the longest piece of the writer thread's work in ms and what it was. */
function writerLongest(text: string): string {
  let longest: { ms: number; operation: string } | null = null;
  for (const match of text.matchAll(/^verdict_buffer_writer_longest_seconds\{operation="(\w+)"\} (\S+)/gm)) {
    const ms = Number(match[2]) * 1000;
    if (!longest || ms > longest.ms) longest = { ms, operation: match[1] as string };
  }
  return longest ? `${longest.ms.toFixed(0)} ${longest.operation}` : '-';
}

export const WINDOW_HEADER =
  '    t  assign/s  event/s batch/s | assign p50/p99/max ms [during a snapshot] | single event p50/p99/max [during] | bare p99 | loop max | major GC  | writer max    | RSS MB  heap |  WAL MB   | pending | miss% | errors';

/** The summary over the whole run: each kind with and without a snapshot running, and the worst window. */
export function printSummary(recorder: Recorder, label = 'whole run'): void {
  const bare = recorder.total.get('bare') as Split<LatencyHistogram>;
  console.log(`\n${label} (p50 / p99 / max in ms; over ${STALL_MS} ms: count; p99 as a ratio to the bare route's p99 in the same state):`);
  for (const kind of KINDS) {
    const split = recorder.total.get(kind) as Split<LatencyHistogram>;
    const parts = (['quiet', 'snapshot'] as const).map((state) => {
      const samples = split[state];
      if (samples.count === 0) return `${state === 'quiet' ? 'no snapshot' : 'during a snapshot'}: none`;
      const ratio = kind === 'bare' || bare[state].count === 0 ? '' : `, ${(samples.summary().p99 / bare[state].summary().p99).toFixed(1)}x bare p99`;
      return `${state === 'quiet' ? 'no snapshot' : 'during a snapshot'}: ${samples.count} requests, ${triple(samples)} (over ${STALL_MS}: ${samples.countAbove(STALL_MS)}${ratio})`;
    });
    const worst = Math.max(0, ...(recorder.windowP99s.get(kind) ?? []));
    console.log(`  ${kind.padEnd(6)} ${parts.join('; ')}; worst window p99 ${ms(worst)}`);
  }
  const errors = [...recorder.errors.entries()].map(([what, count]) => `${what} ${count}`).join(', ');
  console.log(`  errors: ${errors || 'none'}`);
}
