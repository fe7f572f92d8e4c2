import type { Command } from 'commander';
import { loadConfig } from '../config.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Apply pending database migrations and exit (serve also does this on start).')
    .action(async () => {
      const config = loadConfig();
      const { migrateDatabase } = await import('../db/database.js');
      const { applied } = await migrateDatabase(config.database);
      process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n');
    });
}
