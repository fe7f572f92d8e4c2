import { Command, CommanderError } from 'commander';
import { registerAnalyze } from './cli/analyze.js';
import { registerMigrate } from './cli/migrate.js';
import { registerSecrets } from './cli/secrets.js';
import { registerServe } from './cli/serve.js';
import { registerWorker } from './cli/worker.js';
import { registerUsers } from './cli/users.js';
import { registerWorkspaces } from './cli/workspaces.js';
import { ConfigError } from './config.js';

/** Kept in step with the API description's version (src/http/openapi.ts). */
const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command()
    .name('verdict')
    .description('Verdict: experiments, signed webhooks and versioned templates in one self-hosted service.')
    .version(VERSION)
    .addHelpText(
      'after',
      '\nConfiguration comes from the environment: PORT, VERDICT_DATA_DIR, VERDICT_DATABASE_URL, VERDICT_REDIS_URL, ' +
        'VERDICT_SECRET_KEY, VERDICT_LOG_LEVEL (see README.md).',
    );
  registerServe(program);
  registerWorker(program);
  registerMigrate(program);
  registerWorkspaces(program);
  registerUsers(program);
  registerAnalyze(program);
  registerSecrets(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    const message = error instanceof ConfigError ? `configuration error: ${error.message}` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`verdict: ${message}\n`);
    process.exit(1);
  }
}
