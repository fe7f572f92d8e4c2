/**
 * Where a scenario's CPU goes, per request, against the bare Fastify route: both servers run
 * with --perf-basic-prof, Linux `perf` samples each one's main thread under the scenario's load,
 * and every JavaScript function (with what it calls) and the kernel's socket writes are
 * printed in µs per request, side by side. Unlike --cpu-prof it counts the kernel and V8's
 * runtime, and its per-request figures compare two processes directly.
 *
 * With --threads it samples every thread of the server instead (the event buffer's writer thread,
 * V8's and libuv's helpers) and prints each one's share of a core and its largest parts.
 *
 * Needs `perf` (Debian: linux-perf). Run: npm run bench:perf -- assign.hit (or -- events.single --threads)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { attribute, compareRows, largestParts, parseStacks, parseThreadStacks, threadKind, type Attribution } from './lib/perf-samples.js';
import { bareRequest, load, NOOP, startBareServer, startBenchServer, type LoadOptions, type RequestSpec } from './lib/harness.js';
import { scenarios } from './scenarios/index.js';

const SAMPLES_PER_SECOND = 2_000;
const PERF_NODE_ARGS = ['--perf-basic-prof'];

interface Options {
  connections: string;
  seconds: string;
  rows: string;
  threads?: boolean;
}

function perfAvailable(): boolean {
  return spawnSync('perf', ['--version'], { encoding: 'utf8' }).status === 0;
}

/** Loads `url` for longer than perf records, so the whole recording sees steady load; returns perf's samples and the load's rate. */
async function recordUnderLoad(
  pid: number,
  url: string,
  spec: RequestSpec,
  options: LoadOptions,
  label: string,
  target: '-t' | '-p',
): Promise<{ script: string; requests: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-perf-'));
  const data = path.join(dir, 'perf.data');
  const lead = 2;
  const loading = load(url, spec, { ...options, durationSeconds: options.durationSeconds + 2 * lead, serverPid: pid });
  await new Promise((resolve) => setTimeout(resolve, lead * 1000));
  process.stderr.write(`  recording ${label} for ${options.durationSeconds}s...\n`);
  const perfArgs = [
    'record',
    '-e',
    'cpu-clock',
    '-F',
    String(SAMPLES_PER_SECOND),
    '-g',
    target,
    String(pid),
    '-o',
    data,
    '--',
    'sleep',
    String(options.durationSeconds),
  ];
  const perf = spawn('perf', perfArgs, { stdio: 'ignore' });
  const recorded = await new Promise<number | null>((resolve) => perf.once('exit', resolve));
  const result = await loading;
  if (recorded !== 0) throw new Error(`perf record exited with ${recorded} (is kernel.perf_event_paranoid above 2?)`);
  const script = spawnSync('perf', ['script', '-i', data, '-F', 'comm,tid,ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  fs.rmSync(dir, { recursive: true, force: true });
  // The load ran steadily around the recording, so its mean rate holds within it.
  return { script: script.stdout, requests: result.requestsPerSecond * options.durationSeconds };
}

async function profileUnderLoad(pid: number, url: string, spec: RequestSpec, options: LoadOptions, label: string): Promise<Attribution> {
  const { script, requests } = await recordUnderLoad(pid, url, spec, options, label, '-t');
  return attribute(parseStacks(script), SAMPLES_PER_SECOND, requests);
}

/** Every thread of the server: how busy it was, its CPU per request, and its largest parts. */
async function printThreads(pid: number, url: string, spec: RequestSpec, options: LoadOptions, name: string, rows: number): Promise<void> {
  const { script, requests } = await recordUnderLoad(pid, url, spec, options, `${name} (every thread)`, '-p');
  const threads = [...parseThreadStacks(script)].sort((a, b) => b[1].length - a[1].length);
  console.log(`\n[${name}] every thread of the server: share of one core while recording, and µs of its CPU per request`);
  for (const [tid, stacks] of threads) {
    const busy = (100 * stacks.length) / (SAMPLES_PER_SECOND * options.durationSeconds);
    const attribution = attribute(stacks, SAMPLES_PER_SECOND, requests);
    console.log(`${threadKind(tid, pid, stacks)} ${tid}: ${busy.toFixed(1)}% busy, ${attribution.total.toFixed(1)} µs/request`);
    // Helper threads below 5% of a core are listed without their parts.
    if (busy < 5) continue;
    for (const [part, micros] of largestParts(attribution, rows)) {
      console.log(`${micros.toFixed(2).padStart(10)}  ${part.slice(0, 120)}`);
    }
  }
}

function printComparison(name: string, scenario: Attribution, bare: Attribution, rows: number): void {
  console.log(`\n[${name}] µs of the main thread's CPU per request (a function counts with what it calls)`);
  console.log(`${'bare'.padStart(8)} ${name.padStart(18)}  part`);
  console.log(`${bare.total.toFixed(1).padStart(8)} ${scenario.total.toFixed(1).padStart(18)}  the whole request`);
  for (const row of compareRows(scenario, bare, rows)) {
    console.log(`${row.baseline.toFixed(2).padStart(8)} ${row.scenario.toFixed(2).padStart(18)}  ${row.name.slice(0, 120)}`);
  }
}

async function run(name: string, options: Options): Promise<void> {
  const scenario = scenarios.find((candidate) => candidate.name === name);
  if (!scenario) throw new Error(`unknown scenario ${name}; one of: ${scenarios.map((s) => s.name).join(', ')}`);
  if (!perfAvailable()) throw new Error('this needs Linux perf on the PATH (Debian: apt-get install linux-perf)');
  const loadOptions = { connections: Number(options.connections), durationSeconds: Number(options.seconds) };
  const verdict = await startBenchServer({}, PERF_NODE_ARGS);
  // --threads profiles Verdict alone: no bare server to start or warm up.
  const bare = options.threads ? null : await startBareServer(PERF_NODE_ARGS);
  try {
    const spec = await scenario.prepare(verdict);
    process.stderr.write('warming up...\n');
    await load(verdict.url, NOOP, { ...loadOptions, durationSeconds: 2 });
    if (!bare) {
      await printThreads(verdict.pid, verdict.url, spec, loadOptions, name, Number(options.rows));
      return;
    }
    await load(bare.url, bareRequest(spec), { ...loadOptions, durationSeconds: 2 });
    const bareProfile = await profileUnderLoad(bare.pid, bare.url, bareRequest(spec), loadOptions, 'bare Fastify');
    const scenarioProfile = await profileUnderLoad(verdict.pid, verdict.url, spec, loadOptions, name);
    printComparison(name, scenarioProfile, bareProfile, Number(options.rows));
  } finally {
    await Promise.all([verdict.stop(), bare?.stop()]);
  }
}

await new Command()
  .name('bench:perf')
  .description("Per-request CPU of a scenario's parts against the bare Fastify route, from Linux perf samples of both servers.")
  .argument('<scenario>', 'a scenario of npm run bench (npm run bench -- --list)')
  .option('-c, --connections <n>', 'concurrent connections', '64')
  .option('-s, --seconds <n>', 'seconds perf records each server', '5')
  .option('--rows <n>', 'parts to print', '40')
  .option('--threads', "profile every thread of the server (the event buffer's writer thread too) instead of comparing main threads with bare Fastify")
  .action((name: string, options: Options) => run(name, options))
  .parseAsync(process.argv);
