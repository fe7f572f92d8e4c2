import type { Command } from 'commander';
import { loadConfig } from '../config.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Apply pending database migrations and exit (serve also does this on start).')
    .action(async () => {
      const config = loadConfig();
      const { migrateAndWarnIfNew } = await import('./database-check.js');
      // Creating the database may be the point of this run; the warning names where, in case it is not.
      const { applied } = await migrateAndWarnIfNew(config);
      process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n');
      if (config.clickhouse) {
        const { EmbeddedClickHouseHeldError, openClickHouse } = await import('../clickhouse/client.js');
        const { migrateClickHouse } = await import('../clickhouse/schema.js');
        const clickhouse = await openClickHouse(config.clickhouse).catch((error: unknown) => {
          if (!(error instanceof EmbeddedClickHouseHeldError)) throw error;
          // The server migrates the engine it holds when it starts; its tables are its own to change.
          process.stderr.write(`verdict: ClickHouse not migrated here: ${error.message}\n`);
          return null;
        });
        if (!clickhouse) return;
        const changed = await migrateClickHouse(clickhouse).finally(() => clickhouse.close());
        process.stdout.write(changed.length > 0 ? `ClickHouse applied: ${changed.join(', ')}\n` : 'ClickHouse is up to date\n');
      }
    });
}
