import type { Command } from 'commander';
import { loadConfig } from '../config.js';

export function registerAnalyze(program: Command): void {
  program
    .command('analyze')
    .description(
      'Compute an analysis snapshot of an experiment now, store it in its history (audit-logged as experiment.results_computed) ' +
        'and print it as JSON. By default incremental (the rollups refreshed with what is new, then aggregated; docs/analysis.md).',
    )
    .argument('<experiment_id>', 'the experiment id (ULID)')
    .option('--full', 'compute from all raw events, leaving the rollups alone (the incremental result’s oracle)')
    .option('--rebuild', 'drop the experiment’s rollups and build them again from raw events, then compute from them')
    .action(async (experimentId: string, flags: { full?: boolean; rebuild?: boolean }) => {
      if (flags.full && flags.rebuild) throw new Error('--full leaves the rollups alone; --rebuild builds them: choose one');
      const config = loadConfig();
      const { migrateAndWarnIfNew, requireExistingDatabase } = await import('./database-check.js');
      requireExistingDatabase(config);
      await migrateAndWarnIfNew(config);
      const { createContext } = await import('../app/context.js');
      const { computeById } = await import('../features/analysis/service.js');
      const { createSlices } = await import('../features/index.js');
      const { createCommandLogger } = await import('../logger.js');
      // Logs go to stderr so stdout carries only the snapshot (pipe it to jq). Nothing here is
      // served: a build in steps rests only the minimum between them.
      const ctx = await createContext(config, createCommandLogger('warn'), { relay: false, backgroundRest: 0 });
      try {
        // Alerts and auto-stop hear of this snapshot as of any other (their deliveries wait for a worker).
        const { alerts } = createSlices(ctx);
        const { reweightIfDue } = await import('../features/bandits/reweight.js');
        const reweight = (row: Parameters<typeof reweightIfDue>[1]) => reweightIfDue(ctx, row);
        const snapshot = await computeById({ ...ctx, onSnapshot: alerts.onSnapshot, reweightIfDue: reweight }, experimentId, {
          trigger: 'cli',
          mode: flags.full ? 'full' : flags.rebuild === true ? 'incremental' : undefined,
          rebuild: flags.rebuild === true,
          audit: { actorId: null, via: 'cli' },
        });
        if (!snapshot) throw new Error(`no started experiment with id ${experimentId}`);
        process.stdout.write(JSON.stringify(snapshot, null, 2) + '\n');
      } finally {
        await ctx.close();
      }
    });
}
