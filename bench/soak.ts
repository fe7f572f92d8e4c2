// Latency under sustained load (issue #38): seeds a base (units assigned in three experiments,
// their events), starts Verdict in its default configuration in its own process and a bare
// Fastify route in another, and sends both a steady open-loop load for --duration seconds while
// an analysis snapshot is computed every --snapshot-every seconds. Prints per 10-second window the
// throughput, p50/p99/max of assigns and single events with and without a snapshot running, the
// bare route's p99 (the machine's own latency at that moment), the server's event-loop delay,
// RSS, the buffer's pending count and errors; at the end whether every acknowledged event is stored.
// Run: npm run bench:soak -- --units 60000 --events 300000 --duration 120
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { startBareServer, startBenchServer, type BenchServer } from './lib/harness.js';
import { OpenLoop, Target, type Stream } from './lib/open-loop.js';
import type { Samples } from './lib/samples.js';
import { seededUnit, seedSoakBase, SOAK_EXPERIMENTS, type SoakBase } from './lib/soak-seed.js';
import { parseMetrics, printSummary, Recorder, treeRssMb, triple, walSizesMb, WINDOW_HEADER, type Kind, type ServerFigures } from './lib/soak-report.js';

interface Options {
  units: string;
  events: string;
  duration: string;
  assigns: string;
  newUnits: string;
  singles: string;
  batches: string;
  batchSize: string;
  bare: string;
  snapshotEvery: string;
  mode: string;
  window: string;
  idle: string;
  summaryEvery: string;
  nodeArgs: string;
}

const runId = Date.now().toString(36);

/** Whether a snapshot is being computed, and how many have finished (a request spanning one's end saw it). */
class SnapshotState {
  active = false;
  finished = 0;
  readonly durations: number[] = [];
}

function streams(verdict: Target, bare: Target, options: Options, recorder: Recorder, state: SnapshotState): Stream[] {
  const units = Number(options.units);
  let newUnit = 0;
  let eventSeq = 0;
  const acked = { count: 0, inFlight: 0, unanswered: 0 };
  const timed = (kind: Kind, target: Target, path: string, body: string, onOk: (body?: string) => void = () => undefined, readBody = false) => {
    const started = performance.now();
    const activeAtStart = state.active;
    const finishedAtStart = state.finished;
    acked.inFlight += 1;
    target
      .request('POST', path, body, readBody)
      .finally(() => (acked.inFlight -= 1))
      .then(
        (outcome) => {
          const during = activeAtStart || state.active || state.finished !== finishedAtStart;
          if (outcome.status >= 200 && outcome.status < 300) {
            recorder.record(kind, performance.now() - started, during);
            onOk(outcome.body);
          } else recorder.error(`${kind} ${outcome.status}`);
        },
        (error: Error) => {
          recorder.error(`${kind} ${error.message}`);
          // A request without an answer may still have been stored: the count allows for its events.
          if (kind === 'event') acked.unanswered += 1;
          if (kind === 'batch') acked.unanswered += batchSize;
        },
      );
  };
  const event = () => ({
    event_key: 'page_load',
    unit_id: seededUnit(Math.floor(Math.random() * units)),
    properties: { timing: { load_ms: 100 + Math.floor(Math.random() * 200) } },
    client_event_id: `soak-${runId}-${eventSeq++}`,
  });
  const batchSize = Number(options.batchSize);
  const list: Stream[] = [
    {
      name: 'assign',
      perSecond: Number(options.assigns),
      send() {
        const unit = Math.random() < Number(options.newUnits) ? `n-${runId}-${newUnit++}` : seededUnit(Math.floor(Math.random() * units));
        const key = SOAK_EXPERIMENTS[Math.floor(Math.random() * SOAK_EXPERIMENTS.length)] as string;
        timed('assign', verdict, '/v1/assign', JSON.stringify({ experiment_key: key, unit_id: unit }));
      },
    },
    {
      name: 'event',
      perSecond: Number(options.singles),
      send: () => timed('event', verdict, '/v1/events', JSON.stringify(event()), () => (acked.count += 1)),
    },
    {
      name: 'batch',
      perSecond: Number(options.batches),
      send() {
        const body = JSON.stringify({ events: Array.from({ length: batchSize }, event) });
        const count = (text?: string) => (acked.count += (JSON.parse(text ?? '{}') as { accepted_count?: number }).accepted_count ?? 0);
        timed('batch', verdict, '/v1/events/batch', body, count, true);
      },
    },
    { name: 'bare', perSecond: Number(options.bare), send: () => timed('bare', bare, '/bare', '{"ok":true}') },
  ];
  return Object.assign(list, { acked });
}

async function computeSnapshot(verdict: Target, experimentId: string, mode: string): Promise<number> {
  const started = performance.now();
  const outcome = await verdict.request('POST', `/v1/experiments/${experimentId}/results/compute?mode=${mode}`, '{}', true, 600_000);
  if (outcome.status !== 201) throw new Error(`snapshot: ${outcome.status} ${outcome.body}`);
  return (performance.now() - started) / 1000;
}

async function serverFigures(verdict: Target): Promise<{ figures: ServerFigures; pending: number }> {
  const metrics = await verdict.request('GET', '/metrics', null, true);
  const buffer = await verdict.request('GET', '/v1/events/buffer', null, true);
  return { figures: parseMetrics(metrics.body ?? ''), pending: (JSON.parse(buffer.body ?? '{}') as { pending?: number }).pending ?? -1 };
}

interface WindowContext {
  verdict: Target;
  pid: number;
  dataDir: string;
  recorder: Recorder;
  seconds: number;
  last: { hits: number; misses: number; gcCount: number; gcMs: number };
}

async function printWindow(at: number, context: WindowContext): Promise<void> {
  const { samples, errors } = context.recorder.rollWindow();
  const { figures, pending } = await serverFigures(context.verdict);
  const hits = figures.stickyHits - context.last.hits;
  const misses = figures.stickyMisses - context.last.misses;
  // "2/140": two major collections on the API thread in the window, 140 ms of pauses together.
  const majorGc = `${figures.majorGcCount - context.last.gcCount}/${(figures.majorGcMs - context.last.gcMs).toFixed(0)}`;
  context.last = { hits: figures.stickyHits, misses: figures.stickyMisses, gcCount: figures.majorGcCount, gcMs: figures.majorGcMs };
  const get = (kind: Kind) => samples.get(kind) as { quiet: Samples; snapshot: Samples };
  const rate = (kind: Kind) => ((get(kind).quiet.count + get(kind).snapshot.count) / context.seconds).toFixed(0);
  const split = (kind: Kind) => `${triple(get(kind).quiet)}${get(kind).snapshot.count > 0 ? ` [${triple(get(kind).snapshot)}]` : ''}`;
  const bareAll = get('bare').quiet.count >= get('bare').snapshot.count ? get('bare').quiet : get('bare').snapshot;
  const bareP99 = bareAll.count > 0 ? bareAll.summary().p99.toFixed(1) : '-';
  console.log(
    `${String(at).padStart(5)}  ${rate('assign').padStart(8)} ${rate('event').padStart(8)} ${rate('batch').padStart(7)} | ${split('assign').padEnd(38)} | ` +
      `${split('event').padEnd(33)} | ${bareP99.padStart(8)} | ${figures.loopMaxMs.toFixed(0).padStart(8)} | ${majorGc.padEnd(9)} | ${figures.writerLongest.padEnd(13)} | ${(treeRssMb(context.pid) ?? 0).toFixed(0).padStart(6)} ${figures.heapMb.toFixed(0).padStart(5)} | ` +
      `${walSizesMb(context.dataDir).padStart(9)} | ${String(pending).padStart(7)} | ${((100 * misses) / Math.max(1, hits + misses)).toFixed(1).padStart(5)} | ${errors}`,
  );
}

/** Every `everySeconds`, one snapshot of the next experiment in turn (never two at once). */
function snapshotLoop(verdict: Target, base: SoakBase, options: Options, state: SnapshotState, recorder: Recorder): NodeJS.Timeout {
  let next = 0;
  return setInterval(
    () => {
      if (state.active) return;
      state.active = true;
      const experimentId = base.experimentIds[next++ % base.experimentIds.length] as string;
      computeSnapshot(verdict, experimentId, options.mode)
        .then((seconds) => state.durations.push(seconds))
        .catch((error: Error) => recorder.error(`snapshot ${error.message}`))
        .finally(() => {
          state.active = false;
          state.finished += 1;
        });
    },
    Number(options.snapshotEvery) * 1000,
  );
}

async function waitForEmptyBuffer(verdict: Target): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 120_000) {
    if ((await serverFigures(verdict)).pending === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return (performance.now() - started) / 1000;
}

function countStored(server: BenchServer, workspaceId: string): number {
  const db = new Database(`${server.env.VERDICT_DATA_DIR}/verdict.sqlite`, { readonly: true });
  try {
    const row = db.prepare('SELECT count(*) AS n FROM events WHERE workspace_id = ? AND client_event_id GLOB ?').get(workspaceId, `soak-${runId}-*`) as {
      n: number;
    };
    return row.n;
  } finally {
    db.close();
  }
}

async function soak(options: Options): Promise<void> {
  const units = Number(options.units);
  const events = Number(options.events);
  console.log(
    `bench:soak: seeding ${units.toLocaleString('en-US')} units in ${SOAK_EXPERIMENTS.length} experiments and ${events.toLocaleString('en-US')} events...`,
  );
  let base: SoakBase | undefined;
  const seedStarted = performance.now();
  const nodeArgs = options.nodeArgs.split(' ').filter((arg) => arg !== '');
  const server = await startBenchServer({}, nodeArgs, async (dataDir, workspaceId) => {
    base = await seedSoakBase({ dataDir, workspaceId, units, events, now: Date.now() });
  });
  const bareServer = await startBareServer();
  const verdict = new Target(server.url, { authorization: `Bearer ${server.key}` });
  // Snapshots and the window's readings on connections of their own, never queued behind the load.
  const control = new Target(server.url, { authorization: `Bearer ${server.key}` }, 8);
  const bare = new Target(bareServer.url, {});
  try {
    if (!base) throw new Error('the base was not seeded');
    console.log(`seeded and started in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s; idle RSS ${treeRssMb(server.pid)?.toFixed(0)} MB`);
    // One snapshot of each experiment before the load: the server's own scheduler then finds them fresh.
    const warm: string[] = [];
    for (const id of base.experimentIds) warm.push((await computeSnapshot(control, id, options.mode)).toFixed(1));
    console.log(`first snapshots (mode=${options.mode}, no load): ${warm.join(', ')} s; RSS ${treeRssMb(server.pid)?.toFixed(0)} MB`);
    await run(server, { verdict, control, bare }, base, options);
  } finally {
    verdict.close();
    control.close();
    bare.close();
    await Promise.all([server.stop(), bareServer.stop()]);
  }
}

interface Targets {
  verdict: Target;
  control: Target;
  bare: Target;
}

async function run(server: BenchServer, { verdict, control, bare }: Targets, base: SoakBase, options: Options): Promise<void> {
  const recorder = new Recorder();
  const state = new SnapshotState();
  const list = streams(verdict, bare, options, recorder, state) as Stream[] & { acked: { count: number; inFlight: number; unanswered: number } };
  console.log(
    `load: ${options.assigns} assigns/s (${(Number(options.newUnits) * 100).toFixed(0)}% new units, ${SOAK_EXPERIMENTS.length} experiments), ${options.singles} single events/s, ` +
      `${options.batches} batches of ${options.batchSize}/s, bare route ${options.bare}/s; a mode=${options.mode} snapshot every ${options.snapshotEvery} s; ${options.duration} s\n`,
  );
  console.log(WINDOW_HEADER);
  const loop = new OpenLoop(list);
  const windowSeconds = Number(options.window);
  const summaryEvery = Number(options.summaryEvery);
  const context: WindowContext = {
    verdict: control,
    pid: server.pid,
    dataDir: server.env.VERDICT_DATA_DIR as string,
    recorder,
    seconds: windowSeconds,
    last: { hits: 0, misses: 0, gcCount: 0, gcMs: 0 },
  };
  context.last = await serverFigures(control).then(({ figures }) => ({
    hits: figures.stickyHits,
    misses: figures.stickyMisses,
    gcCount: figures.majorGcCount,
    gcMs: figures.majorGcMs,
  }));
  loop.start();
  const snapshots = snapshotLoop(control, base, options, state, recorder);
  const started = performance.now();
  for (let at = windowSeconds; at <= Number(options.duration); at += windowSeconds) {
    await new Promise((resolve) => setTimeout(resolve, started + at * 1000 - performance.now()));
    await printWindow(at, context);
    // An interim summary, so one long run gives both the 10-minute latency and the hour's memory.
    if (summaryEvery > 0 && at % summaryEvery === 0 && at < Number(options.duration)) {
      printSummary(recorder, `first ${at} s`);
      console.log(`  RSS now ${treeRssMb(server.pid)?.toFixed(0)} MB\n\n${WINDOW_HEADER}`);
    }
  }
  loop.stop();
  clearInterval(snapshots);
  while (state.active) await new Promise((resolve) => setTimeout(resolve, 100));
  // The last answers: an event acknowledged after the count would read as stored but never acknowledged.
  for (const waitUntil = performance.now() + 120_000; list.acked.inFlight > 0 && performance.now() < waitUntil;)
    await new Promise((resolve) => setTimeout(resolve, 100));
  printSummary(recorder);
  const durations = state.durations.map((seconds) => seconds.toFixed(1)).join(', ');
  console.log(`  snapshots during the load: ${state.durations.length} (${durations} s)`);
  const drained = await waitForEmptyBuffer(control);
  const stored = countStored(server, base.workspaceId);
  const acked = list.acked.count;
  console.log(
    `  acknowledged events: ${acked}; stored after the buffer emptied (${drained.toFixed(1)} s): ${stored}; ${stored === acked ? 'every one counted' : 'MISMATCH'}`,
  );
  console.log(`  RSS right after the load ${treeRssMb(server.pid)?.toFixed(0)} MB`);
  await new Promise((resolve) => setTimeout(resolve, Number(options.idle) * 1000));
  console.log(`  RSS after ${options.idle} s idle ${treeRssMb(server.pid)?.toFixed(0)} MB`);
}

await new Command()
  .name('bench:soak')
  .description('Steady open-loop mixed load with snapshots on a cadence; latency per 10 s window, with and without a snapshot running.')
  .option('--units <n>', 'units seeded, each assigned in all three experiments', '60000')
  .option('--events <n>', 'events seeded', '300000')
  .option('--duration <seconds>', 'length of the load', '120')
  .option('--assigns <per-second>', 'assign requests per second', '2000')
  .option('--new-units <fraction>', 'share of assigns for units never seen', '0.05')
  .option('--singles <per-second>', 'single events per second (POST /v1/events)', '500')
  .option('--batches <per-second>', 'batches per second (POST /v1/events/batch)', '4')
  .option('--batch-size <n>', 'events per batch', '500')
  .option('--bare <per-second>', 'requests per second to the bare Fastify route (the baseline)', '200')
  .option('--snapshot-every <seconds>', 'start a snapshot this often (never two at once)', '60')
  .option('--mode <mode>', 'snapshot computation: full or incremental', 'full')
  .option('--window <seconds>', 'reporting window', '10')
  .option('--summary-every <seconds>', 'also print the summary so far this often (0: only at the end)', '0')
  .option('--idle <seconds>', 'idle time after the load before the last RSS reading', '20')
  .option('--node-args <args>', "Node.js options for Verdict's process, such as '--cpu-prof --cpu-prof-dir=/tmp/soak-prof' or '--trace-gc' (to stderr)", '')
  .action((options: Options) => soak(options))
  .parseAsync(process.argv);
