import { Command } from 'commander';
import { assignHit, assignMiss } from './scenarios/assignment.js';
import { trackEventBatch, trackSingleEvent } from './scenarios/events.js';
import { currentWorkspace } from './scenarios/foundation.js';
import { createHtmlRender, createPdfRender } from './scenarios/templates.js';
import { formatRow, load, NOOP, startBenchServer, type LoadResult, type Scenario } from './lib/harness.js';

/** Every scenario by name; add new ones here. */
const scenarios: Scenario[] = [currentWorkspace, assignHit, assignMiss, trackSingleEvent, trackEventBatch, createHtmlRender, createPdfRender];

interface Options {
  connections: string;
  duration: string;
  list?: boolean;
  cpuProfDir?: string;
  rounds: string;
  processes: string;
}

async function run(names: string[], options: Options): Promise<void> {
  const chosen = names.length === 0 ? scenarios : scenarios.filter((s) => names.includes(s.name));
  const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; try --list`);
  const loadOptions = { connections: Number(options.connections), durationSeconds: Number(options.duration) };
  const server = await startBenchServer({ VERDICT_API_PROCESSES: options.processes }, options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : []);
  try {
    console.log(`Verdict benchmarks: ${loadOptions.connections} connections, ${loadOptions.durationSeconds}s each, load from this process, server in another.`);
    console.log(
      `database: ${server.env.VERDICT_DATABASE_URL ? 'postgres' : 'sqlite'}; buffer: ${server.env.VERDICT_REDIS_URL ? 'redis' : 'embedded'}; ` +
        `HTTP processes: ${options.processes}\n`,
    );
    process.stdout.write('warming up...\n');
    await load(server.url, NOOP, { ...loadOptions, durationSeconds: 2 });
    for (const scenario of chosen) {
      process.stdout.write(`[${scenario.name}] ${scenario.description}\n`);
      const spec = await scenario.prepare(server);
      // Baseline and scenario alternate, so a slow spell of the shared machine hits both; the
      // round with the median ratio is reported.
      const rounds: Array<{ baseline: LoadResult; result: LoadResult }> = [];
      for (let round = 0; round < Number(options.rounds); round += 1) {
        rounds.push({ baseline: await load(server.url, NOOP, loadOptions), result: await load(server.url, spec, loadOptions) });
      }
      const ratio = (r: { baseline: LoadResult; result: LoadResult }) => r.result.requestsPerSecond / r.baseline.requestsPerSecond;
      const { baseline, result } = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)] as (typeof rounds)[number];
      if (rounds.length > 1) console.log(`ratios of ${rounds.length} rounds: ${rounds.map((r) => ratio(r).toFixed(2)).join(', ')} (median round below)`);
      console.log(formatRow('no-op baseline', baseline, baseline));
      console.log(formatRow(scenario.name, result, baseline, scenario.itemsPerRequest));
      if (scenario.afterLoad) console.log(await scenario.afterLoad(server));
      console.log('');
    }
  } finally {
    await server.stop();
  }
}

const program = new Command()
  .name('bench')
  .description('Load-test Verdict scenarios beside a no-op route on the same server, and print req/s, p50, p99 and the ratio.')
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
