import type { Db, Executor } from '../../db/database.js';
import { resealedColumns } from '../../lib/rotating-secret.js';
import type { SecretBox } from '../../lib/secrets.js';
import { recordAudit } from '../audit/recorder.js';

/**
 * Re-encrypts every stored secret (each workspace's webhook secret, each webhook source's current
 * and previous inbound secret, each webhook endpoint's URL and current and previous signing secret, each
 * workspace's previous task-tool secret) from one secret key to
 * another, in one transaction, with one `secret_key.rotated` audit entry per workspace. Nothing
 * changes unless every secret opens with the current key.
 */
export async function resealAllSecrets(db: Db, from: SecretBox, to: SecretBox, at: number): Promise<{ workspaces: number; secrets: number }> {
  return db.transaction().execute(async (trx) => {
    const counts = new Map<string, number>();
    const reseal = (workspaceId: string, sealed: string): string => {
      let plain: string;
      try {
        plain = from.open(sealed);
      } catch {
        throw new Error(`a stored secret of workspace ${workspaceId} does not open with the current secret key: is this the key the servers use?`);
      }
      counts.set(workspaceId, (counts.get(workspaceId) ?? 0) + 1);
      return to.seal(plain);
    };
    for (const row of await trx.selectFrom('workspaces').select(['id', 'webhook_secret_enc']).execute()) {
      counts.set(row.id, counts.get(row.id) ?? 0);
      await trx
        .updateTable('workspaces')
        .set({ webhook_secret_enc: reseal(row.id, row.webhook_secret_enc) })
        .where('id', '=', row.id)
        .execute();
    }
    for (const table of ['webhook_sources', 'webhook_endpoints'] as const) {
      for (const row of await trx.selectFrom(table).select(['id', 'workspace_id', 'secret_enc', 'previous_secret_enc']).execute()) {
        const columns = resealedColumns(row, (sealed) => reseal(row.workspace_id, sealed));
        await trx.updateTable(table).set(columns).where('id', '=', row.id).execute();
      }
    }
    for (const row of await trx.selectFrom('webhook_endpoints').select(['id', 'workspace_id', 'url_enc']).execute()) {
      await trx
        .updateTable('webhook_endpoints')
        .set({ url_enc: reseal(row.workspace_id, row.url_enc) })
        .where('id', '=', row.id)
        .execute();
    }
    for (const row of await trx
      .selectFrom('task_tool_settings')
      .select(['workspace_id', 'previous_secret_enc'])
      .where('previous_secret_enc', 'is not', null)
      .execute()) {
      const previous = reseal(row.workspace_id, row.previous_secret_enc as string);
      await trx.updateTable('task_tool_settings').set({ previous_secret_enc: previous }).where('workspace_id', '=', row.workspace_id).execute();
    }
    await auditRotation(trx, counts, at);
    return { workspaces: counts.size, secrets: [...counts.values()].reduce((a, b) => a + b, 0) };
  });
}

async function auditRotation(trx: Executor, counts: Map<string, number>, at: number): Promise<void> {
  for (const [workspaceId, secrets] of counts) {
    await recordAudit(trx, {
      workspaceId,
      actorId: null,
      action: 'secret_key.rotated',
      targetType: 'workspace',
      targetId: workspaceId,
      payload: { secrets_reencrypted: secrets, via: 'cli' },
      at,
    });
  }
}
