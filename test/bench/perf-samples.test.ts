import { describe, expect, it } from 'vitest';
import { attribute, compareRows, parseStacks, parseThreadStacks, threadKind } from '../../bench/lib/perf-samples.js';

// Three samples as `perf script -F ip,sym` prints them: a header line, then frames leaf first.
const SCRIPT = `node 101
\t    7f01 _raw_spin_unlock_irqrestore
\t    7f02 __GI___writev
\t    3a01 JS:*clearBuffer node:internal/streams/writable:744:21
\t    3a02 JS:*end node:_http_outgoing:1034:45

node 101
\t    3b01 JS:*parse /app/node_modules/secure-json-parse/index.js:129:16
\t    3b02 JS:^parse /app/node_modules/secure-json-parse/index.js:129:16
\t    3a02 JS:*end node:_http_outgoing:1034:45

node 101
\t    5c01 v8::internal::ScavengerCollector::CollectGarbage
\t    5c02 Builtins_RunMicrotasks
`;

describe('perf samples per request', () => {
  it('reads each sample as its stack of frames, leaf first', () => {
    const stacks = parseStacks(SCRIPT);
    expect(stacks).toHaveLength(3);
    expect(stacks[0]).toEqual([
      '_raw_spin_unlock_irqrestore',
      '__GI___writev',
      'JS:*clearBuffer node:internal/streams/writable:744:21',
      'JS:*end node:_http_outgoing:1034:45',
    ]);
    expect(stacks[2]).toEqual(['v8::internal::ScavengerCollector::CollectGarbage', 'Builtins_RunMicrotasks']);
  });

  it('reads samples without header lines too (perf script -F ip,sym prints none)', () => {
    const withoutHeaders = SCRIPT.split('\n')
      .filter((line) => !line.startsWith('node'))
      .join('\n');
    expect(parseStacks(withoutHeaders)).toEqual(parseStacks(SCRIPT));
  });

  it('counts a function once per sample, whatever its tier, inclusive of what it calls, in µs per request', () => {
    // 1,000 samples a second and 10 requests: each sample is 100 µs per request.
    const attribution = attribute(parseStacks(SCRIPT), 1_000, 10);
    expect(attribution.total).toBeCloseTo(300);
    expect(attribution.perRequest.get('JS end node:_http_outgoing')).toBeCloseTo(200);
    // Two copies of parse in one stack (optimised and baseline) are one function in one sample.
    expect(attribution.perRequest.get('JS parse /app/node_modules/secure-json-parse/index.js')).toBeCloseTo(100);
    expect(attribution.perRequest.get('kernel: socket writes (writev, waking the client included)')).toBeCloseTo(100);
    expect(attribution.perRequest.get('V8: garbage collection')).toBeCloseTo(100);
  });

  it("lists the scenario's largest parts first, with the baseline's figure for the same part", () => {
    const scenario = attribute(parseStacks(SCRIPT), 1_000, 10);
    const baseline = attribute(parseStacks(SCRIPT.split('\n\n')[0] ?? ''), 1_000, 20);
    const rows = compareRows(scenario, baseline, 2);
    expect(rows[0]).toEqual({ name: 'JS end node:_http_outgoing', scenario: expect.closeTo(200) as number, baseline: expect.closeTo(50) as number });
    expect(rows).toHaveLength(2);
  });

  it("splits a whole process's samples by thread and tells the threads apart", () => {
    // As `perf script -F comm,tid,ip,sym` prints them: every thread of Node is named "node".
    const process = `node   101 
\t    3a02 JS:*end node:_http_outgoing:1034:45

node   107 
\t    9a01 sqlite3_step
\t    9a02 node::worker::Worker::Run

node   107 
\t    9b01 fsync
\t    9a01 sqlite3_step

node   103 
\t    8a01 v8::internal::ScavengerCollector::JobTask::Run
`;
    const threads = parseThreadStacks(process);
    expect([...threads.keys()]).toEqual([101, 107, 103]);
    expect(threads.get(107)).toEqual([
      ['sqlite3_step', 'node::worker::Worker::Run'],
      ['fsync', 'sqlite3_step'],
    ]);
    expect(threadKind(101, 101, threads.get(101) ?? [])).toBe('main thread');
    expect(threadKind(107, 101, threads.get(107) ?? [])).toBe('worker thread (worker_threads)');
    expect(threadKind(103, 101, threads.get(103) ?? [])).toBe('V8 or libuv helper thread');
    const writer = attribute(threads.get(107) ?? [], 1_000, 10);
    expect(writer.perRequest.get('SQLite: statements (sqlite3_step, its fsync included)')).toBeCloseTo(200);
    expect(writer.perRequest.get('kernel: fsync')).toBeCloseTo(100);
  });
});
