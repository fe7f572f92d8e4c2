import type { Command } from 'commander';
import { loadConfig, NUMERIC_SETTINGS, parseBoundedInteger } from '../config.js';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'Run background jobs only (outbound deliveries, webhook mirroring, renders, analysis, housekeeping), for scaled mode. ' +
        'Run as many as you like against the same database; each job runs once.',
    )
    .option(
      '-c, --concurrency <n>',
      'general jobs (renders, mirroring, analysis) run at the same time (default: $VERDICT_JOB_CONCURRENCY or 4); ' +
        'outbound deliveries have a pool of their own ($VERDICT_WEBHOOK_CONCURRENCY or 16)',
    )
    .action(async (options: { concurrency?: string }) => {
      const base = loadConfig();
      const { checkWorkerWithClickHouse } = await import('../clickhouse/process-rules.js');
      checkWorkerWithClickHouse(base);
      const { min, max } = NUMERIC_SETTINGS.VERDICT_JOB_CONCURRENCY;
      const concurrency = options.concurrency ? parseBoundedInteger('--concurrency', options.concurrency, min, max) : base.jobs.concurrency;
      const { openRuntime, startBackground } = await import('./runtime.js');
      const { onSignals } = await import('./shutdown.js');
      const { ctx } = await openRuntime({ ...base, jobs: { ...base.jobs, concurrency } }, true);
      const background = startBackground(ctx);
      ctx.logger.info({ worker: background.worker.id, jobs: ctx.jobs.names, concurrency, outbound: base.jobs.outbound }, 'worker started');
      onSignals([background.stopStage(base.shutdownTimeoutMs), ...ctx.closeSteps().map((step) => [step])], ctx.logger, { timeoutMs: base.shutdownTimeoutMs });
    });
}
