import type { Command } from 'commander';
import { loadConfig } from '../config.js';

interface ServeOptions {
  port?: string;
  host?: string;
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
    .option('--no-workers', 'do not run background jobs in this process')
    .action(async (options: ServeOptions) => {
      const config = loadConfig(process.env, {
        ...(options.port ? { port: Number(options.port) } : {}),
        ...(options.host ? { host: options.host } : {}),
      });
      // Loaded on demand so `verdict --help` and the light commands start fast.
      const { onSignals, openRuntime, startBackground } = await import('./runtime.js');
      const { buildApp } = await import('../http/app.js');
      const ctx = await openRuntime(config, true);
      const app = await buildApp(ctx);
      const background = options.workers ? startBackground(ctx) : null;
      await app.listen({ port: config.port, host: config.host });
      ctx.logger.info(
        { database: config.database.kind, buffer: config.buffer.kind, workers: options.workers },
        `Verdict is serving on http://${config.host}:${config.port} (API docs at /docs)`,
      );
      onSignals(async () => {
        await app.close();
        await background?.stop();
        await ctx.close();
      }, ctx.logger);
    });
}
