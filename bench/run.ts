import { Command } from 'commander';
import { scenarios } from './scenarios/index.js';
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
  method: string;
  backgroundName?: string | undefined;
  backgroundConnections?: number | undefined;
}

const bareRatio = (round: Round) => round.result.requestsPerSecond / round.bare.requestsPerSecond;

const cpuRatio = (round: Round) =>
  round.result.cpuMicrosPerRequest !== null && round.bare.cpuMicrosPerRequest ? round.result.cpuMicrosPerRequest / round.bare.cpuMicrosPerRequest : null;

/** The round with the median ratio to the bare route (rounds alternate, so a slow spell of the shared machine hits all three). */
function medianRound<R extends Round>(rounds: R[]): R {
  return [...rounds].sort((a, b) => bareRatio(a) - bareRatio(b))[Math.floor(rounds.length / 2)] as R;
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

interface Servers {
  verdict: BenchServer;
  bare: BareServer;
}

/**
 * A Verdict server and a bare one, both warmed up. Each round gets its own pair: two processes
 * running the same code on this 2-core machine differed by up to 35% in CPU per request (four
 * bare servers measured side by side: 16.4 to 22.1 µs), more than most changes being measured,
 * so the median round is also a median over processes.
 */
async function startServers(options: Options, loadOptions: LoadOptions): Promise<Servers> {
  const verdict = await startBenchServer(
    { VERDICT_API_PROCESSES: options.processes },
    options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [],
  );
  const bare = await startBareServer();
  await load(verdict.url, NOOP, { ...loadOptions, durationSeconds: 2 });
  await load(bare.url, { path: '/bare' }, { ...loadOptions, durationSeconds: 2 });
  return { verdict, bare };
}

async function stopServers(servers: Servers): Promise<void> {
  await Promise.all([servers.verdict.stop(), servers.bare.stop()]);
}

/** One round on a fresh pair of servers: the bare route, the no-op route, then the scenario. */
async function measureRound(scenario: Scenario, options: Options, loadOptions: LoadOptions): Promise<Round & { servers: Servers }> {
  const servers = await startServers(options, loadOptions);
  try {
    const spec = await scenario.prepare(servers.verdict);
    const background: Background | null = scenario.background ? { ...scenario.background, spec: await scenario.background.prepare(servers.verdict) } : null;
    return {
      bare: await load(servers.bare.url, bareRequest(spec), { ...loadOptions, serverPid: servers.bare.pid }),
      noop: await load(servers.verdict.url, noopRequest(spec), { ...loadOptions, serverPid: servers.verdict.pid }),
      ...(await loadScenario(servers.verdict.url, spec, background, { ...loadOptions, serverPid: servers.verdict.pid })),
      servers,
      method: spec.method ?? 'GET',
      backgroundName: background?.name,
      backgroundConnections: background?.connections,
    };
  } catch (error) {
    await stopServers(servers);
    throw error;
  }
}

async function measure(scenario: Scenario, options: Options, loadOptions: LoadOptions): Promise<Round> {
  const rounds: Array<Round & { servers: Servers }> = [];
  try {
    for (let round = 0; round < Number(options.rounds); round += 1) {
      const measured = await measureRound(scenario, options, loadOptions);
      rounds.push(measured);
      // The last round's servers stay up for the scenario's after-load report.
      if (round < Number(options.rounds) - 1) await stopServers(measured.servers);
    }
    if (rounds.length > 1) {
      console.log(
        `ratios to bare Fastify of ${rounds.length} rounds, each on new server processes: ${rounds.map((r) => bareRatio(r).toFixed(2)).join(', ')} (median round below)`,
      );
      const cpuRatios = rounds.map(cpuRatio).filter((ratio): ratio is number => ratio !== null);
      if (cpuRatios.length > 0) console.log(`CPU per request as a ratio to bare Fastify's: ${cpuRatios.map((r) => r.toFixed(2)).join(', ')}`);
    }
    const median = medianRound(rounds);
    console.log(formatRow(`bare Fastify ${median.method}`, median.bare, {}));
    console.log(formatRow('no-op (Verdict stack)', median.noop, { bare: median.bare }));
    console.log(formatRow(scenario.name, median.result, { bare: median.bare, noop: median.noop }, scenario.itemsPerRequest));
    if (median.backgroundName && median.beside)
      console.log(`${formatRow(`  beside it: ${median.backgroundName}`, median.beside, {})} (${median.backgroundConnections} connections)`);
    const last = rounds.at(-1);
    if (scenario.afterLoad && last) console.log(await scenario.afterLoad(last.servers.verdict));
    console.log('');
    return median;
  } finally {
    const last = rounds.at(-1);
    if (last) await stopServers(last.servers);
  }
}

async function run(names: string[], options: Options): Promise<void> {
  const chosen = names.length === 0 ? scenarios : scenarios.filter((s) => names.includes(s.name));
  const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; try --list`);
  const loadOptions = { connections: Number(options.connections), durationSeconds: Number(options.duration) };
  const env = process.env;
  console.log(`Verdict benchmarks: ${loadOptions.connections} connections, ${loadOptions.durationSeconds}s each, load from this process, servers in others.`);
  console.log(
    `database: ${env.VERDICT_DATABASE_URL ? 'postgres' : 'sqlite'}; buffer: ${env.VERDICT_REDIS_URL ? 'redis' : 'embedded'}; ` +
      `HTTP processes: ${options.processes}; log level: ${env.VERDICT_LOG_LEVEL ?? 'default (info)'}`,
  );
  console.log("baseline: a bare Fastify route in its own process (no hooks, no logging), sent the scenario's method, headers and body");
  console.log('each round starts a new Verdict server and a new bare server, and warms both up\n');
  const summary: Array<[string, Round]> = [];
  for (const scenario of chosen) {
    process.stdout.write(`[${scenario.name}] ${scenario.description}\n`);
    summary.push([scenario.name, await measure(scenario, options, loadOptions)]);
  }
  console.log('summary (median round): throughput and p99 as a ratio to the bare Fastify route');
  for (const [name, round] of summary) {
    const cpu = cpuRatio(round);
    console.log(
      `  ${name.padEnd(26)} ${bareRatio(round).toFixed(2)}x bare req/s   p99 ${round.result.p99.toFixed(2)} ms = ${(round.result.p99 / round.bare.p99).toFixed(2)}x bare p99` +
        (cpu === null ? '' : `   CPU/req ${cpu.toFixed(2)}x bare`),
    );
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
