import type { Executor } from '../../db/database.js';
import { uniqueViolationAs } from '../../db/dialect.js';
import { newId } from '../../lib/ids.js';
import { randomBase62 } from '../../lib/secrets.js';
import { addApiKey } from '../api-keys/service.js';
import { recordAudit } from '../audit/recorder.js';
import { addEnvironment } from '../environments/service.js';
import type { WorkspacesDeps } from './deps.js';
import { insertWorkspace, slugTaken, toWorkspace } from './store.js';
import { newWebhookSecret } from './webhook-secret.js';

export const DEFAULT_ENVIRONMENT = { name: 'Production', slug: 'production' };

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return slug || 'workspace';
}

async function freeSlug(executor: Executor, name: string): Promise<string> {
  const base = slugify(name);
  if (!(await slugTaken(executor, base))) return base;
  return `${base}-${randomBase62(4).slice(0, 6).toLowerCase()}`;
}

/**
 * The bootstrap: a workspace with its production environment, a first server key and the
 * webhook secret, created and audited in one transaction. Secrets are returned once.
 */
export async function createWorkspace(ctx: WorkspacesDeps, name: string) {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw new Error('the workspace name must be 1 to 100 characters');
  const webhookSecret = newWebhookSecret();
  const created = await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const now = ctx.clock.now();
        const row = { id: newId(), name: trimmed, slug: await freeSlug(trx, trimmed), webhook_secret_enc: ctx.secrets.seal(webhookSecret), created_at: now };
        await insertWorkspace(trx, row);
        await recordAudit(trx, {
          workspaceId: row.id,
          actorId: null,
          action: 'workspace.created',
          targetType: 'workspace',
          targetId: row.id,
          payload: { name: row.name, slug: row.slug },
          at: now,
        });
        const environment = await addEnvironment(trx, row.id, DEFAULT_ENVIRONMENT, null, now);
        const apiKey = await addApiKey(trx, row.id, { name: 'Bootstrap server key', kind: 'server', environment_id: null }, null, now);
        return { workspace: toWorkspace(row), environment, api_key: apiKey };
      }),
    () => new Error('a workspace with this slug was created at the same moment; run the command again'),
  );
  return { ...created, webhook_secret: webhookSecret };
}
