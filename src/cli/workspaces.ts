import type { Command } from 'commander';
import { loadConfig } from '../config.js';

export function registerWorkspaces(program: Command): void {
  const workspaces = program.command('workspaces').description('Manage workspaces (tenants).');
  workspaces
    .command('create')
    .description(
      'Create a workspace with its "production" environment, a server API key and the webhook secret. ' + 'The key and the secret are shown once: store them.',
    )
    .requiredOption('-n, --name <name>', 'display name of the workspace')
    .option('--json', 'print one JSON object {workspace, environment, api_key, webhook_secret}')
    .action(async (options: { name: string; json?: boolean }) => {
      const config = loadConfig();
      const { openDatabase } = await import('../db/database.js');
      const { createWorkspaces } = await import('../features/workspaces/index.js');
      const { loadSecretBox } = await import('../lib/secrets.js');
      const { systemClock } = await import('../lib/time.js');
      const { migrateAndWarnIfNew } = await import('./database-check.js');
      await migrateAndWarnIfNew(config);
      // The database alone: never the event buffer or ClickHouse, which a running server holds
      // (the embedded engine's directory opens in one process at a time).
      const handle = openDatabase(config.database);
      try {
        const deps = { db: handle.db, seam: handle.seam, clock: systemClock, secrets: loadSecretBox(config.secretKey, config.dataDir) };
        const created = await createWorkspaces(deps).createWorkspace(options.name);
        if (options.json) {
          process.stdout.write(JSON.stringify(created) + '\n');
          return;
        }
        process.stdout.write(
          [
            `Workspace ${created.workspace.name} (${created.workspace.id}) created with environment "${created.environment.slug}".`,
            `Server API key (shown once):  ${created.api_key.key}`,
            `Webhook secret (shown once):  ${created.webhook_secret}`,
            `Try: curl -H "Authorization: Bearer ${created.api_key.key}" http://localhost:${config.port}/v1/workspaces/current`,
          ].join('\n') + '\n',
        );
      } finally {
        await handle.destroy();
      }
    });
}
