/**
 * Reads `perf script` output of a Node server run with --perf-basic-prof and attributes its
 * samples per request: what each part of a request costs in µs of the thread's CPU, kernel
 * included (the V8 profiler sees neither the kernel's share of a socket write nor the
 * runtime's).
 */

/** One sampled stack, leaf first. */
export type Stack = string[];

/** Splits `perf script` output into stacks: a sample's frames follow its header line (if any fields make one) and end at a blank line. */
export function parseStacks(text: string): Stack[] {
  const stacks: Stack[] = [];
  let current: Stack | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current) stacks.push(current);
      current = null;
    } else if (!/^\s/.test(line)) {
      if (current) stacks.push(current);
      current = [];
    } else {
      // "    7bac1b node::InternalCallbackScope::Close": the address, then the symbol.
      const frame = line.trim();
      const space = frame.indexOf(' ');
      current ??= [];
      current.push(space === -1 ? frame : frame.slice(space + 1));
    }
  }
  if (current) stacks.push(current);
  return stacks;
}

/** The samples of each thread, from `perf script -F comm,tid,ip,sym` (each header line is "comm tid"). */
export function parseThreadStacks(text: string): Map<number, Stack[]> {
  const byThread = new Map<number, Stack[]>();
  let tid = 0;
  for (const block of text.split(/\n\s*\n/)) {
    const header = block.split('\n').find((line) => line.trim() !== '' && !/^\s/.test(line));
    if (header) tid = Number(/(\d+)\s*$/.exec(header)?.[1] ?? 0);
    for (const stack of parseStacks(block)) {
      const stacks = byThread.get(tid) ?? [];
      stacks.push(stack);
      byThread.set(tid, stacks);
    }
  }
  return byThread;
}

/** What a thread of a Node process is, told by its stacks: `pid` is the main thread's id. */
export function threadKind(tid: number, pid: number, stacks: Stack[]): string {
  if (tid === pid) return 'main thread';
  if (stacks.some((stack) => stack.some((frame) => frame.includes('node::worker::Worker::Run')))) return 'worker thread (worker_threads)';
  return 'V8 or libuv helper thread';
}

/** A JavaScript frame without its line and column (several optimised copies of one function count as one). */
function frameName(frame: string): string {
  return frame.replace(/:\d+:\d+$/, '').replace(/^JS:[*^~]?/, 'JS ');
}

/** Parts of a request that are not one JavaScript function. */
const GROUPS: Array<[string, (stack: Stack) => boolean]> = [
  ['kernel: socket writes (writev, waking the client included)', (stack) => stack.some((frame) => frame.includes('writev'))],
  ['V8: garbage collection', (stack) => stack.some((frame) => /Scavenge|Heap::CollectGarbage|MarkCompact/.test(frame))],
  ['SQLite: statements (sqlite3_step, its fsync included)', (stack) => stack.includes('sqlite3_step')],
  ['kernel: fsync', (stack) => stack.some((frame) => frame === 'fsync' || frame === 'fdatasync')],
];

export interface Attribution {
  /** µs of the thread's CPU per request over the whole sample. */
  total: number;
  /** µs per request of each frame (inclusive: a function with what it calls) and of each group. */
  perRequest: Map<string, number>;
}

/**
 * `samplesPerSecond` is perf's -F; `requests` the requests completed while perf recorded. A
 * frame's µs per request is the time of the samples it appears in, over the requests.
 */
export function attribute(stacks: Stack[], samplesPerSecond: number, requests: number): Attribution {
  const microsPerSample = 1e6 / samplesPerSecond / Math.max(requests, 1);
  const counts = new Map<string, number>();
  const add = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const stack of stacks) {
    for (const name of new Set(stack.filter((frame) => frame.startsWith('JS:')).map(frameName))) add(name);
    for (const [group, matches] of GROUPS) if (matches(stack)) add(group);
  }
  const perRequest = new Map([...counts].map(([key, count]) => [key, count * microsPerSample]));
  return { total: stacks.length * microsPerSample, perRequest };
}

/** The `limit` parts that cost the most per request, largest first, as [part, µs]. */
export function largestParts(attribution: Attribution, limit: number): Array<[string, number]> {
  return [...attribution.perRequest].sort((a, b) => b[1] - a[1]).slice(0, limit);
}

/** The rows worth printing: the largest costs of the scenario, with the baseline's beside them. */
export function compareRows(scenario: Attribution, baseline: Attribution, limit: number): Array<{ name: string; scenario: number; baseline: number }> {
  return largestParts(scenario, limit).map(([name, micros]) => ({ name, scenario: micros, baseline: baseline.perRequest.get(name) ?? 0 }));
}
