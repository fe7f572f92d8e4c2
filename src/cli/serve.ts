import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { loadConfig, NUMERIC_SETTINGS, parseBoundedInteger, type Config } from '../config.js';

interface ServeOptions {
  port?: string;
  host?: string;
  processes?: string;
  workers: boolean;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'Serve the HTTP API (what `npm start` runs). Migrates the database first. In the embedded default it also ' +
        'runs the background jobs; pass --no-workers when separate `verdict worker` processes do that.',
    )
    .option('-p, --port <port>', 'port to listen on (default: $PORT or 8080)')
    .option('--host <host>', 'address to bind (default: $HOST or 0.0.0.0)')
    .option('--processes <n>', 'HTTP processes sharing the port, one per core at most (default: $VERDICT_API_PROCESSES or 1)')
    .option('--no-workers', 'do not run background jobs in this process')
    .action(async (options: ServeOptions) => {
      const config = loadConfig(process.env, {
        ...(options.port ? { port: parseBoundedInteger('--port', options.port, NUMERIC_SETTINGS.PORT.min, NUMERIC_SETTINGS.PORT.max) } : {}),
        ...(options.host ? { host: options.host } : {}),
        ...(options.processes ? { apiProcesses: processCount(options.processes) } : {}),
      });
      const { checkServeWithClickHouse } = await import('../clickhouse/process-rules.js');
      checkServeWithClickHouse(config, options.workers);
      // Loaded on demand so `verdict --help` and the light commands start fast.
      const { processIndex, reportStartupFailure } = await import('./cluster.js');
      const index = processIndex();
      if (index === null && config.apiProcesses > 1) {
        await startPrimary(config);
        return;
      }
      // A process of a cluster tells the primary why it could not start, for the primary's log.
      await serveHere(config, index, options.workers).catch(async (error: unknown) => {
        await reportStartupFailure(error);
        throw error;
      });
    });
}

/** The primary of `serve --processes N`: migrates once, here, then forks the HTTP processes. */
async function startPrimary(config: Config): Promise<void> {
  const [{ runPrimary }, { migrateDatabase }, { createLogger }, { loadSecretBox }] = await Promise.all([
    import('./cluster.js'),
    import('../db/database.js'),
    import('../logger.js'),
    import('../lib/secrets.js'),
  ]);
  const logger = createLogger(config.logLevel);
  // The processes then only open the database; the secret key file is made here too, so they
  // never race to create it.
  const secrets = loadSecretBox(config.secretKey, config.dataDir);
  const { applied } = await migrateDatabase(config.database, secrets);
  if (applied.length > 0) logger.info({ applied }, 'database migrated');
  if (config.clickhouse) {
    // Kept open while ClickHouse cannot be reached: this process retries the migration until it answers.
    const { openClickHouseFor } = await import('../clickhouse/schema.js');
    await openClickHouseFor(config.clickhouse, logger, true);
  }
  runPrimary(config.apiProcesses, logger, config.shutdownTimeoutMs);
}

/** Serves HTTP on this process (alone, or as process `index` of a cluster) until a signal stops it. */
async function serveHere(config: Config, index: number | null, workers: boolean): Promise<void> {
  const { openRuntime, startBackground } = await import('./runtime.js');
  const { onSignals } = await import('./shutdown.js');
  const { buildApp } = await import('../app/http.js');
  const { ctx, slices } = await openRuntime(config, index === null);
  const app = await buildApp(ctx, slices);
  ctx.writes.warm?.();
  await app.listen({ port: config.port, host: config.host });
  // Only once listening: jobs queued while the server was down (CPU-bound renders) would
  // otherwise keep it from answering until they are done. Of a cluster's processes only the
  // first runs the jobs and the event drainer.
  const runsBackground = workers && (index === null || index === 0);
  const background = runsBackground ? startBackground(ctx) : null;
  const bound = boundAddress(app.server.address(), config);
  ctx.logger.info(
    {
      ...bound,
      database: config.database.kind,
      buffer: config.buffer.kind,
      workers: runsBackground,
      ...(index === null ? {} : { process: index, pid: process.pid }),
    },
    `Verdict is serving on http://${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}${WILDCARD_HOSTS.has(bound.address) ? ' (every interface)' : ''} (API docs at /docs)`,
  );
  onSignals(
    [
      [{ name: 'the HTTP server (requests in flight, open connections)', run: () => app.close() }],
      ...(background ? [background.stopStage(config.shutdownTimeoutMs)] : []),
      ...ctx.closeSteps().map((step) => [step]),
    ],
    ctx.logger,
    { timeoutMs: config.shutdownTimeoutMs },
  );
}

/** Addresses that listen on every interface of the host, which the start-up line says aloud. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::']);

/** What the server really bound (the port chosen by the system for PORT=0), as the log reports it. */
function boundAddress(address: string | AddressInfo | null, config: Config): { address: string; port: number } {
  return address !== null && typeof address === 'object' ? { address: address.address, port: address.port } : { address: config.host, port: config.port };
}

function processCount(raw: string): number {
  const { min, max } = NUMERIC_SETTINGS.VERDICT_API_PROCESSES;
  return parseBoundedInteger('--processes', raw, min, max);
}
