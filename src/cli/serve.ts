import type { Command } from 'commander';
import { loadConfig, MAX_API_PROCESSES } from '../config.js';

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
        ...(options.port ? { port: Number(options.port) } : {}),
        ...(options.host ? { host: options.host } : {}),
        ...(options.processes ? { apiProcesses: processCount(options.processes) } : {}),
      });
      // Loaded on demand so `verdict --help` and the light commands start fast.
      const { processIndex, runPrimary } = await import('./cluster.js');
      const index = processIndex();
      if (index === null && config.apiProcesses > 1) {
        // Migrate once, here, before the processes start; they then only open the database. The
        // secret key file is made here too, so the processes never race to create it.
        const [{ migrateDatabase }, { createLogger }, { loadSecretBox }] = await Promise.all([import('../db/database.js'), import('../logger.js'), import('../lib/secrets.js')]);
        const logger = createLogger(config.logLevel);
        loadSecretBox(config.secretKey, config.dataDir);
        const { applied } = await migrateDatabase(config.database);
        if (applied.length > 0) logger.info({ applied }, 'database migrated');
        runPrimary(config.apiProcesses, logger);
        return;
      }
      const { onSignals, openRuntime, startBackground } = await import('./runtime.js');
      const { buildApp } = await import('../http/app.js');
      const ctx = await openRuntime(config, index === null);
      const app = await buildApp(ctx);
      await app.listen({ port: config.port, host: config.host });
      // Only once listening: jobs queued while the server was down (CPU-bound renders) would
      // otherwise keep it from answering until they are done. Of a cluster's processes only the
      // first runs the jobs and the event drainer.
      const runsBackground = options.workers && (index === null || index === 0);
      const background = runsBackground ? startBackground(ctx) : null;
      ctx.logger.info(
        { database: config.database.kind, buffer: config.buffer.kind, workers: runsBackground, ...(index === null ? {} : { process: index, pid: process.pid }) },
        `Verdict is serving on http://${config.host}:${config.port} (API docs at /docs)`,
      );
      onSignals(async () => {
        await app.close();
        await background?.stop();
        await ctx.close();
      }, ctx.logger);
    });
}

function processCount(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > MAX_API_PROCESSES) throw new Error(`--processes must be an integer from 1 to ${MAX_API_PROCESSES}, got "${raw}"`);
  return value;
}
