// Renders per second of the render function itself (what one worker slot does per job), for
// html and for pdf, on the invoice of the templates scenario. Run: npm run bench:templates
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import type { RenderFormat } from '../src/db/tables/templates.js';
import { renderDocument } from '../src/features/renders/document.js';
import { INVOICE_BODY, INVOICE_DATA } from './scenarios/templates.js';

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  bytes: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(formats: RenderFormat[], seconds: number): Promise<Figures> {
  const request = { body: INVOICE_BODY, data: INVOICE_DATA, formats, createdAt: Date.UTC(2024, 2, 1) };
  // Warm-up: compile the body, load fonts, let the JIT settle.
  for (let i = 0; i < 20; i += 1) await renderDocument(request);
  const durations: number[] = [];
  let bytes = 0;
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const started = performance.now();
    const outputs = await renderDocument(request);
    durations.push(performance.now() - started);
    bytes = outputs.reduce((sum, output) => sum + output.content.length, 0);
  }
  const total = durations.reduce((sum, ms) => sum + ms, 0);
  durations.sort((a, b) => a - b);
  return { perSecond: (durations.length / total) * 1000, p50: percentile(durations, 50), p99: percentile(durations, 99), bytes };
}

async function run(seconds: number): Promise<void> {
  console.log(`Template renders on one core, ${seconds}s per format, invoice with ${INVOICE_DATA.items.length} lines (in-process, no database).\n`);
  for (const formats of [['html'], ['pdf'], ['text'], ['markdown'], ['html', 'text', 'markdown', 'pdf']] as RenderFormat[][]) {
    const figures = await measure(formats, seconds);
    console.log(
      `${formats.join('+').padEnd(26)} renders/s ${figures.perSecond.toFixed(0).padStart(6)}  p50 ${figures.p50.toFixed(2).padStart(6)} ms  ` +
        `p99 ${figures.p99.toFixed(2).padStart(6)} ms  output ${figures.bytes} bytes`,
    );
  }
}

await new Command()
  .name('bench:templates')
  .description('Measure renders per second of the template render function for each format.')
  .option('-d, --duration <seconds>', 'seconds per format', '5')
  .action(async (options: { duration: string }) => run(Number(options.duration)))
  .parseAsync(process.argv);
