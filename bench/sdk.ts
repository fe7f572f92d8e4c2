// Events per second that @verdict/sdk sustains from one Node process against `verdict serve`
// on this machine, beside POST /v1/events/batch driven directly from the same process with the
// same batch size and requests in flight. Both send a new client_event_id with every event, so
// the server's de-duplication is paid in both. Each figure is a fixed number of events divided by
// the time until the last is acknowledged; the application side never runs far ahead of the SDK.
// Run: npm run bench:sdk -- --events 50000 --rounds 3    (figures: sdk/README.md)
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { createClient } from '../sdk/src/index.js';
import { startBenchServer, type BenchServer } from './lib/harness.js';

interface Options {
  events: string;
  rounds: string;
}

interface Setting {
  maxBatch: number;
  inFlight: number;
}

const UNITS = 500;

/** The application's side: tracks `total` events, never more than a few batches ahead of the sender. */
async function measureSdk(server: BenchServer, total: number, { maxBatch, inFlight }: Setting): Promise<number> {
  const errors: string[] = [];
  const sdk = createClient({
    baseUrl: server.url,
    apiKey: server.key,
    maxBatch,
    maxConcurrentRequests: inFlight,
    onError: (error) => void errors.push(error.message),
  });
  const backlog = maxBatch * inFlight * 4;
  const started = performance.now();
  for (let n = 0; n < total; n += 1) {
    sdk.track('purchase', `user-${n % UNITS}`, { amount: 12.5, currency: 'EUR' });
    // An application tracks between other work: yield to the event loop every 100 events, and
    // wait while a few batches are already queued.
    if (n % 100 !== 99) continue;
    await new Promise((resolve) => setImmediate(resolve));
    while (sdk.stats().queued >= backlog) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await sdk.flush();
  const elapsed = (performance.now() - started) / 1000;
  await sdk.close();
  const { sent, dropped } = sdk.stats();
  if (errors.length > 0 || dropped > 0 || sent !== total)
    throw new Error(`the SDK run lost events: ${errors[0] ?? `${dropped} dropped, ${sent} of ${total} sent`}`);
  return total / elapsed;
}

/** POST /v1/events/batch from `inFlight` loops until `total` events are acknowledged. */
async function measureDirect(server: BenchServer, total: number, { maxBatch, inFlight }: Setting): Promise<number> {
  const run = Date.now().toString(36);
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < total) {
      const events = Array.from({ length: Math.min(maxBatch, total - next) }, () => {
        next += 1;
        return {
          event_key: 'purchase',
          unit_id: `user-${next % UNITS}`,
          properties: { amount: 12.5, currency: 'EUR' },
          client_event_id: `direct-${run}-${next}`,
        };
      });
      const response = await fetch(`${server.url}/v1/events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      if (response.status !== 202) throw new Error(`events batch answered ${response.status}: ${await response.text()}`);
      await response.json();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return total / ((performance.now() - started) / 1000);
}

const program = new Command()
  .name('bench:sdk')
  .option('--events <n>', 'events sent in each measurement', '50000')
  .option('--rounds <n>', 'measurements of each, alternating SDK and direct; the best is printed', '3')
  .action(async (options: Options) => {
    const total = Number(options.events);
    const settings: (Setting & { label: string })[] = [
      { label: 'defaults', maxBatch: 100, inFlight: 2 },
      { label: 'maxBatch 500', maxBatch: 500, inFlight: 2 },
      { label: 'maxBatch 500, 4 requests at once', maxBatch: 500, inFlight: 4 },
    ];
    const server = await startBenchServer();
    try {
      // A short warm-up so neither side pays the server's first-request costs.
      await measureDirect(server, 5_000, { maxBatch: 500, inFlight: 2 });
      console.log(
        `events/s from one Node process to verdict serve (SQLite, embedded buffer), ${total.toLocaleString('en')} events each, until all are acknowledged, best of ${options.rounds}:`,
      );
      for (const setting of settings) {
        let sdk = 0;
        let direct = 0;
        // Alternating rounds and the best of each: on a shared machine the worst are other load.
        for (let round = 0; round < Number(options.rounds); round += 1) {
          sdk = Math.max(sdk, await measureSdk(server, total, setting));
          direct = Math.max(direct, await measureDirect(server, total, setting));
        }
        const pad = setting.label.padEnd(34);
        console.log(
          `  ${pad} SDK track(): ${Math.round(sdk).toLocaleString('en').padStart(8)}   /v1/events/batch direct: ${Math.round(direct).toLocaleString('en').padStart(8)}   (${setting.maxBatch} per request, ${setting.inFlight} in flight)`,
        );
      }
    } finally {
      await server.stop();
    }
  });

await program.parseAsync();
