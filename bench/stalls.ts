// Where the event loop stalled: reads a V8 CPU profile of Verdict's main thread (node
// --cpu-prof, or `npm run bench:soak -- --node-args '--cpu-prof --cpu-prof-dir=DIR'`) and prints
// every stretch of at least --min-ms in which the thread never went idle, with the functions that
// took its time (self time) and the outermost functions they ran under. A stretch without idle
// samples is a stretch in which no request was answered.
// Run: npm run bench:stalls -- /tmp/soak-prof/CPU.*.cpuprofile --min-ms 80
import fs from 'node:fs';
import { Command } from 'commander';
import { frameLabel as label, type CallFrame } from './lib/profile-frames.js';

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Stretch {
  startMs: number;
  durationMs: number;
  /** Sample node ids with the time each sample stood for, in µs. */
  samples: Array<{ node: number; us: number }>;
}

const IDLE = '(idle)';

/** Stretches of consecutive non-idle samples lasting at least `minMs`. */
function busyStretches(profile: CpuProfile, byId: Map<number, ProfileNode>, minMs: number): Stretch[] {
  const stretches: Stretch[] = [];
  let at = 0;
  let current: Stretch | null = null;
  profile.samples.forEach((node, index) => {
    // A sample's delta is the time since the previous one: it stands for the interval before it.
    const us = profile.timeDeltas[index] ?? 0;
    at += us;
    const idle = byId.get(node)?.callFrame.functionName === IDLE;
    if (idle) {
      if (current && current.durationMs >= minMs) stretches.push(current);
      current = null;
      return;
    }
    current ??= { startMs: (at - us) / 1000, durationMs: 0, samples: [] };
    current.durationMs += us / 1000;
    current.samples.push({ node, us });
  });
  const last = current as Stretch | null;
  if (last && last.durationMs >= minMs) stretches.push(last);
  return stretches;
}

/** Each node's path from the root, outermost first (the root itself left out). */
function pathsOf(profile: CpuProfile): Map<number, ProfileNode[]> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const paths = new Map<number, ProfileNode[]>();
  for (const node of profile.nodes) {
    const path: ProfileNode[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const found = byId.get(id);
      if (found && found.callFrame.functionName !== '(root)') path.unshift(found);
    }
    paths.set(node.id, path);
  }
  return paths;
}

function top(totals: Map<string, number>, rows: number): string[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([name, us]) => `${(us / 1000).toFixed(1).padStart(7)} ms  ${name}`);
}

function describe(stretch: Stretch, byId: Map<number, ProfileNode>, paths: Map<number, ProfileNode[]>, rows: number): string[] {
  const self = new Map<string, number>();
  const outer = new Map<string, number>();
  for (const { node, us } of stretch.samples) {
    const frame = byId.get(node)?.callFrame;
    if (!frame) continue;
    self.set(label(frame), (self.get(label(frame)) ?? 0) + us);
    // The outermost frame of our own code (src/), else the outermost JavaScript frame.
    const path = paths.get(node) ?? [];
    const ours = path.find((entry) => entry.callFrame.url.includes('/src/')) ?? path.find((entry) => entry.callFrame.url !== '') ?? path[0];
    if (ours) outer.set(label(ours.callFrame), (outer.get(label(ours.callFrame)) ?? 0) + us);
  }
  return ['  self time:', ...top(self, rows).map((line) => `    ${line}`), '  under:', ...top(outer, rows).map((line) => `    ${line}`)];
}

const program = new Command()
  .argument('<profile>', 'a .cpuprofile file')
  .option('--min-ms <ms>', 'shortest stretch to print', '80')
  .option('--rows <n>', 'functions per list', '8')
  .action((file: string, options: { minMs: string; rows: string }) => {
    const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const paths = pathsOf(profile);
    const stretches = busyStretches(profile, byId, Number(options.minMs));
    const total = profile.timeDeltas.reduce((sum, us) => sum + us, 0) / 1000;
    console.log(`${file}: ${(total / 1000).toFixed(1)} s profiled, ${stretches.length} stretches of ${options.minMs} ms or more without an idle sample`);
    for (const stretch of stretches) {
      console.log(`\nat ${(stretch.startMs / 1000).toFixed(2)} s: ${stretch.durationMs.toFixed(0)} ms busy`);
      for (const line of describe(stretch, byId, paths, Number(options.rows))) console.log(line);
    }
  });

program.parse();
