import { Command } from 'commander';
import { assignHit, assignHitBesideEvents, assignMiss } from './scenarios/assignment.js';
import { trackEventBatch, trackSingleEvent } from './scenarios/events.js';
import { currentWorkspace } from './scenarios/foundation.js';
import { createHtmlRender, createPdfRender } from './scenarios/templates.js';
import {
  bareRequest,
  formatRow,
  load,
  NOOP,
  noopRequest,
  startBareServer,
  startBenchServer,
  type BareServer,
  type BenchServer,
  type LoadOptions,
  type LoadResult,
  type RequestSpec,
  type Scenario,
} from './lib/harness.js';

/** Every scenario by name; add new ones here. */
const scenarios: Scenario[] = [
  currentWorkspace,
  assignHit,
  assignHitBesideEvents,
  assignMiss,
  trackSingleEvent,
  trackEventBatch,
  createHtmlRender,
  createPdfRender,
];

interface Options {
  connections: string;
  duration: string;
  list?: boolean;
  cpuProfDir?: string;
  rounds: string;
  processes: string;
}

interface Round {
  bare: LoadResult;
  noop: LoadResult;
  result: LoadResult;
  /** The scenario's background traffic, measured during `result`. */
  beside?: LoadResult;
}

const bareRatio = (round: Round) => round.result.requestsPerSecond / round.bare.requestsPerSecond;

const cpuRatio = (round: Round) =>
  round.result.cpuMicrosPerRequest !== null && round.bare.cpuMicrosPerRequest ? round.result.cpuMicrosPerRequest / round.bare.cpuMicrosPerRequest : null;

/** The round with the median ratio to the bare route (rounds alternate, so a slow spell of the shared machine hits all three). */
function medianRound(rounds: Round[]): Round {
  return [...rounds].sort((a, b) => bareRatio(a) - bareRatio(b))[Math.floor(rounds.length / 2)] as Round;
}

interface Background {
  name: string;
  spec: RequestSpec;
  connections: number;
}

/** The scenario's load, with its background traffic (if any) running beside it on the same server. */
async function loadScenario(url: string, spec: RequestSpec, background: Background | null, options: LoadOptions): Promise<Pick<Round, 'result' | 'beside'>> {
  if (!background) return { result: await load(url, spec, options) };
  const [result, beside] = await Promise.all([
    load(url, spec, options),
    load(url, background.spec, { connections: background.connections, durationSeconds: options.durationSeconds }),
  ]);
  return { result, beside };
}

async function measure(servers: { verdict: BenchServer; bare: BareServer }, scenario: Scenario, loadOptions: LoadOptions, roundCount: number): Promise<Round> {
  const spec = await scenario.prepare(servers.verdict);
  const background: Background | null = scenario.background ? { ...scenario.background, spec: await scenario.background.prepare(servers.verdict) } : null;
  const rounds: Round[] = [];
  for (let round = 0; round < roundCount; round += 1) {
    rounds.push({
      bare: await load(servers.bare.url, bareRequest(spec), { ...loadOptions, serverPid: servers.bare.pid }),
      noop: await load(servers.verdict.url, noopRequest(spec), { ...loadOptions, serverPid: servers.verdict.pid }),
      ...(await loadScenario(servers.verdict.url, spec, background, { ...loadOptions, serverPid: servers.verdict.pid })),
    });
  }
  if (rounds.length > 1) {
    console.log(`ratios to bare Fastify of ${rounds.length} rounds: ${rounds.map((r) => bareRatio(r).toFixed(2)).join(', ')} (median round below)`);
    const cpuRatios = rounds.map(cpuRatio).filter((ratio): ratio is number => ratio !== null);
    if (cpuRatios.length > 0) console.log(`CPU per request as a ratio to bare Fastify's: ${cpuRatios.map((r) => r.toFixed(2)).join(', ')}`);
  }
  const median = medianRound(rounds);
  console.log(formatRow(`bare Fastify ${spec.method ?? 'GET'}`, median.bare, {}));
  console.log(formatRow('no-op (Verdict stack)', median.noop, { bare: median.bare }));
  console.log(formatRow(scenario.name, median.result, { bare: median.bare, noop: median.noop }, scenario.itemsPerRequest));
  if (background && median.beside) console.log(`${formatRow(`  beside it: ${background.name}`, median.beside, {})} (${background.connections} connections)`);
  if (scenario.afterLoad) console.log(await scenario.afterLoad(servers.verdict));
  console.log('');
  return median;
}

async function run(names: string[], options: Options): Promise<void> {
  const chosen = names.length === 0 ? scenarios : scenarios.filter((s) => names.includes(s.name));
  const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; try --list`);
  const loadOptions = { connections: Number(options.connections), durationSeconds: Number(options.duration) };
  const verdict = await startBenchServer(
    { VERDICT_API_PROCESSES: options.processes },
    options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [],
  );
  const bare = await startBareServer();
  try {
    console.log(`Verdict benchmarks: ${loadOptions.connections} connections, ${loadOptions.durationSeconds}s each, load from this process, servers in others.`);
    console.log(
      `database: ${verdict.env.VERDICT_DATABASE_URL ? 'postgres' : 'sqlite'}; buffer: ${verdict.env.VERDICT_REDIS_URL ? 'redis' : 'embedded'}; ` +
        `HTTP processes: ${options.processes}; log level: ${verdict.env.VERDICT_LOG_LEVEL ?? 'default (info)'}`,
    );
    console.log("baseline: a bare Fastify route in its own process (no hooks, no logging), sent the scenario's method, headers and body\n");
    process.stdout.write('warming up...\n');
    await load(verdict.url, NOOP, { ...loadOptions, durationSeconds: 2 });
    await load(bare.url, { path: '/bare' }, { ...loadOptions, durationSeconds: 2 });
    const summary: Array<[string, Round]> = [];
    for (const scenario of chosen) {
      process.stdout.write(`[${scenario.name}] ${scenario.description}\n`);
      summary.push([scenario.name, await measure({ verdict, bare }, scenario, loadOptions, Number(options.rounds))]);
    }
    console.log('summary (median round): throughput and p99 as a ratio to the bare Fastify route');
    for (const [name, round] of summary) {
      const cpu = cpuRatio(round);
      console.log(
        `  ${name.padEnd(26)} ${bareRatio(round).toFixed(2)}x bare req/s   p99 ${round.result.p99.toFixed(2)} ms = ${(round.result.p99 / round.bare.p99).toFixed(2)}x bare p99` +
          (cpu === null ? '' : `   CPU/req ${cpu.toFixed(2)}x bare`),
      );
    }
  } finally {
    await Promise.all([verdict.stop(), bare.stop()]);
  }
}

const program = new Command()
  .name('bench')
  .description("Load-test Verdict scenarios beside a bare Fastify route (its own process) and Verdict's no-op route, and print req/s, p50, p99 and the ratios.")
  .argument('[scenarios...]', 'scenario names (default: all)')
  .option('-c, --connections <n>', 'concurrent connections', '64')
  .option('-d, --duration <seconds>', 'seconds per measurement', '10')
  .option('-r, --rounds <n>', 'alternate baseline and scenario this many times and report the median round', '1')
  .option('-p, --processes <n>', 'HTTP processes the server runs (serve --processes); the no-op baseline runs on the same ones', '1')
  .option('--list', 'list the scenarios and exit')
  .option('--cpu-prof-dir <dir>', 'write a V8 CPU profile of the server to this directory (open it in Chrome DevTools)')
  .action(async (names: string[], options: Options) => {
    if (options.list) {
      for (const s of scenarios) console.log(`${s.name.padEnd(28)} ${s.description}`);
      return;
    }
    await run(names, options);
  });

await program.parseAsync(process.argv);
