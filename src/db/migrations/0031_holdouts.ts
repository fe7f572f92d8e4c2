import type { Kysely } from 'kysely';

// Holdouts (issue #57): a share of an environment's units kept on the control of every experiment
// the holdout covers.
// - holdouts: its environment, unit type, percentage, status and dates; `salt` draws the held-out
//   units, `sample_salt` the equal-size comparison sample; `experiment_ids` (JSON array) lists the
//   covered experiments, or is null for "every experiment started in the environment after it";
// - holdout_opt_outs: experiments that are never held out, with the reason given.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('holdouts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('unit_type', 'text', (c) => c.notNull())
    .addColumn('percent', 'double precision', (c) => c.notNull())
    .addColumn('experiment_ids', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('salt', 'text', (c) => c.notNull())
    .addColumn('sample_salt', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('holdouts_workspace_status_idx').on('holdouts').columns(['workspace_id', 'status', 'id']).execute();

  await db.schema
    .createTable('holdout_opt_outs')
    .addColumn('experiment_id', 'text', (c) => c.primaryKey().references('experiments.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('holdout_opt_outs').execute();
  await db.schema.dropTable('holdouts').execute();
}
