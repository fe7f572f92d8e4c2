import type { Kysely, Migration } from 'kysely';
import type { SecretBox } from '../../lib/secrets.js';

// Webhook endpoint URLs are secrets (docs/webhooks.md "Endpoint URLs are secrets"): each row's URL
// is sealed with the secret key into url_enc, what is shown of it goes to url_masked, and the
// plain column is dropped. The audit entries of endpoints keep only the masked URL from now on:
// the plain one is replaced in the entries written before (created and deleted: `url`; updated:
// `changes.url.from` and `.to`). Sealing needs the key, so this migration is given the secret box.

interface EndpointRow {
  id: string;
  url: string;
}

interface AuditRow {
  id: string;
  payload: string;
}

/**
 * The mask as this migration applies it, kept here rather than imported: a migration must do
 * tomorrow what it did when it was written, whatever the webhook slice's mask becomes (the slice's
 * `maskEndpointUrl` applies the same rule to URLs saved from now on).
 */
function maskEndpointUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return '…';
  }
  const rest = `${url.pathname}${url.search}${url.hash}`.replace(/^\//, '');
  const origin = `${url.protocol}//${url.host}/`;
  if (rest === '') return origin;
  return rest.length >= 4 + 16 ? `${origin}…${rest.slice(-4)}` : `${origin}…`;
}

type Payload = { url?: unknown; changes?: { url?: { from?: unknown; to?: unknown } } };

const masked = (value: unknown) => (typeof value === 'string' ? maskEndpointUrl(value) : value);

function maskedPayload(text: string): string {
  const payload = JSON.parse(text) as Payload;
  if ('url' in payload) payload.url = masked(payload.url);
  const change = payload.changes?.url;
  if (change) Object.assign(change, { from: masked(change.from), to: masked(change.to) });
  return JSON.stringify(payload);
}

export function sealEndpointUrls(secrets: SecretBox | null): Migration {
  return {
    async up(untyped: Kysely<unknown>): Promise<void> {
      const db = untyped as Kysely<{
        webhook_endpoints: EndpointRow & { url_enc: string; url_masked: string };
        audit_entries: AuditRow & { target_type: string };
      }>;
      // Checked before any change: SQLite's DDL is not transactional, so a stop halfway would stay.
      const rows = await db.selectFrom('webhook_endpoints').select(['id', 'url']).execute();
      if (rows.length > 0 && !secrets)
        throw new Error('sealing webhook endpoint URLs needs the secret key (VERDICT_SECRET_KEY or the data directory’s secret.key)');
      await db.schema
        .alterTable('webhook_endpoints')
        .addColumn('url_enc', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('webhook_endpoints')
        .addColumn('url_masked', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      for (const row of rows) {
        const columns = { url_enc: (secrets as SecretBox).seal(row.url), url_masked: maskEndpointUrl(row.url) };
        await db.updateTable('webhook_endpoints').set(columns).where('id', '=', row.id).execute();
      }
      await db.schema.alterTable('webhook_endpoints').dropColumn('url').execute();
      const entries = await db.selectFrom('audit_entries').select(['id', 'payload']).where('target_type', '=', 'webhook_endpoint').execute();
      for (const entry of entries) {
        const payload = maskedPayload(entry.payload);
        if (payload !== entry.payload) await db.updateTable('audit_entries').set({ payload }).where('id', '=', entry.id).execute();
      }
    },
  };
}
