import type { Command } from 'commander';
import { loadConfig } from '../config.js';

const ROLES = ['admin', 'editor', 'viewer'];

export function registerUsers(program: Command): void {
  const users = program.command('users').description("Manage the people of a workspace (the admin UI's accounts).");
  users
    .command('invite')
    .description(
      'Invite a person to a workspace with a role (the way to make its first admin). Prints the one-time invitation link, shown once: ' +
        'whoever opens it sets the name and password. Links point at VERDICT_PUBLIC_URL, else at http://localhost:PORT.',
    )
    .requiredOption('-w, --workspace <id>', 'the workspace id')
    .requiredOption('-e, --email <email>', "the person's email address")
    .requiredOption('-r, --role <role>', 'admin, editor or viewer')
    .option('--json', 'print one JSON object {user, invite_url, expires_at}')
    .action(async (options: { workspace: string; email: string; role: string; json?: boolean }) => {
      if (!ROLES.includes(options.role)) throw new Error(`--role must be admin, editor or viewer, got "${options.role}"`);
      const config = loadConfig();
      const { openDatabase } = await import('../db/database.js');
      const { inviteFromCommandLine } = await import('../features/people/command-line.js');
      const { systemClock } = await import('../lib/time.js');
      const { migrateAndWarnIfNew } = await import('./database-check.js');
      await migrateAndWarnIfNew(config);
      // The database alone: no buffer or embedded ClickHouse, which a running `verdict serve` holds.
      const handle = openDatabase(config.database);
      const ctx = { db: handle.db, seam: handle.seam, clock: systemClock, config };
      try {
        const invited = await inviteFromCommandLine(ctx, options.workspace, options.email, options.role as 'admin');
        if (options.json) {
          process.stdout.write(JSON.stringify(invited) + '\n');
          return;
        }
        process.stdout.write(
          [
            `Invited ${invited.user.email} as ${invited.user.role}.`,
            `Invitation link (shown once, valid until ${invited.expires_at}):  ${invited.invite_url}`,
          ].join('\n') + '\n',
        );
      } finally {
        await handle.destroy();
      }
    });
}
