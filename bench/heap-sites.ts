// Which code allocates the heap: reads a V8 sampling heap profile (bench/lib/heap-sample.mjs writes
// one from a soak) and prints the allocation sites by sampled bytes, twice: by the function that
// allocated (self) and by the innermost frame of Verdict's own code on the stack, since most
// allocations happen inside Node or a library on Verdict's behalf.
// Run: npm run bench:heap-sites -- /tmp/verdict-1234-collected.heapprofile --top 25
import fs from 'node:fs';
import { Command } from 'commander';
import { frameLabel as label, type CallFrame } from './lib/profile-frames.js';

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

interface HeapProfile {
  head: HeapNode;
}

const OWN_CODE = /\/(src|bench)\//;

function add(totals: Map<string, number>, key: string, bytes: number): void {
  totals.set(key, (totals.get(key) ?? 0) + bytes);
}

function walk(node: HeapNode, ownFrame: string, bySelf: Map<string, number>, byOwn: Map<string, number>): void {
  const here = label(node.callFrame);
  const own = OWN_CODE.test(node.callFrame.url) ? here : ownFrame;
  if (node.selfSize > 0) {
    add(bySelf, here, node.selfSize);
    add(byOwn, own, node.selfSize);
  }
  for (const child of node.children) walk(child, own, bySelf, byOwn);
}

function print(title: string, totals: Map<string, number>, all: number, top: number): void {
  console.log(`\n${title}`);
  const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [site, bytes] of rows) {
    console.log(`${(bytes / 2 ** 20).toFixed(1).padStart(9)} MB ${((100 * bytes) / all).toFixed(1).padStart(5)}%  ${site}`);
  }
}

function main(file: string, top: number): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as HeapProfile;
  const bySelf = new Map<string, number>();
  const byOwn = new Map<string, number>();
  walk(profile.head, '(outside Verdict)', bySelf, byOwn);
  const all = [...bySelf.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(`${file}: ${(all / 2 ** 20).toFixed(1)} MB sampled`);
  print('By allocating function (self)', bySelf, all, top);
  print("By the innermost frame of Verdict's code", byOwn, all, top);
}

const program = new Command()
  .argument('<profile>', 'a .heapprofile file')
  .option('--top <n>', 'rows per table', '25')
  .action((file: string, options: { top: string }) => main(file, Number(options.top)));
program.parse();
