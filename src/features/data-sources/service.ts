import type { Executor } from '../../db/database.js';
import type { DataSourceKind } from '../../db/tables/warehouse.js';
import { Problem, problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import { SourceError, withSource, type SessionLimits, type SourceSession } from './connectors/index.js';
import type { DataSourcesDeps } from './deps.js';
import { urlRefusal } from './network.js';
import type { DataSourceInput, DataSourcePatch, DataSourceTestResult } from './schemas.js';
import { isEmbedded, maskSourceUrl, sourceUrlDefect } from './source-url.js';
import {
  deleteDataSource,
  factTablesOf,
  findDataSource,
  insertDataSource,
  lockDataSource,
  toDataSource,
  updateDataSource,
  type DataSourceRow,
} from './store.js';

export interface Actor {
  workspaceId: string;
  actorId: string;
}

export function sourceNotFound(id: string): Problem {
  return problems.notFound(`no data source with id ${id}`);
}

export async function auditSource(trx: Executor, actor: Actor, action: string, id: string, payload: Record<string, unknown>, at: number): Promise<void> {
  await recordAudit(trx, { ...actor, action, targetType: 'data_source', targetId: id, payload, at });
}

export function limitsOf(ctx: DataSourcesDeps): SessionLimits {
  return { ...ctx.config.dataSources };
}

/** The problem a source's failure answers with: 504 past the timeout, 502 without a connection, 422 for SQL it refused. */
export function problemOf(error: SourceError, sqlPointer = '/sql'): Problem {
  if (error.reason === 'timeout') return problems.dataSourceTimeout(error.message);
  if (error.reason === 'query') return problems.validation([{ pointer: sqlPointer, message: `the source refused it: ${error.message}` }]);
  return problems.dataSourceUnreachable(error.message);
}

/** Runs `work` on the source's session, its failures answered as problems. */
export async function onSource<T>(ctx: DataSourcesDeps, row: DataSourceRow, work: (session: SourceSession) => Promise<T>): Promise<T> {
  try {
    return await withSource(row.kind, ctx.secrets.open(row.url_enc), limitsOf(ctx), work);
  } catch (error) {
    if (error instanceof SourceError) throw problemOf(error);
    throw error;
  }
}

/** A 422 pointing at /url when the URL cannot be this kind's or the network rule refuses its host; never quoting it. */
async function requireSourceUrl(ctx: DataSourcesDeps, kind: DataSourceKind, url: string): Promise<void> {
  const defect = sourceUrlDefect(kind, url);
  if (defect) throw problems.validation([{ pointer: '/url', message: defect }]);
  const policy = limitsOf(ctx);
  if (isEmbedded(url)) {
    if (!policy.allowPrivateNetworks) {
      throw problems.validation([
        { pointer: '/url', message: 'the embedded engine (chdb:) runs on this machine: refused unless VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1' },
      ]);
    }
    return;
  }
  const refusal = await urlRefusal(new URL(url).hostname, policy);
  if (refusal) throw problems.validation([{ pointer: '/url', message: refusal }]);
}

export async function createDataSource(ctx: DataSourcesDeps, actor: Actor, input: DataSourceInput) {
  await requireSourceUrl(ctx, input.kind, input.url);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const row: DataSourceRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: input.name,
      kind: input.kind,
      url_enc: ctx.secrets.seal(input.url),
      url_masked: maskSourceUrl(input.url),
      created_at: now,
      updated_at: now,
    };
    await insertDataSource(trx, row);
    await auditSource(trx, actor, 'data_source.created', row.id, { name: row.name, kind: row.kind, url: row.url_masked }, now);
    // The only answer besides a PATCH of it that shows the whole URL: the caller just sent it.
    return { ...toDataSource(row), url: input.url };
  });
}

export async function getDataSource(ctx: DataSourcesDeps, workspaceId: string, id: string) {
  const row = await findDataSource(ctx.db, workspaceId, id);
  if (!row) throw sourceNotFound(id);
  return toDataSource(row);
}

/** Changes the name or URL; the masked URL sent back, or the same URL, changes nothing. An unchanged body logs nothing. */
export async function patchDataSource(ctx: DataSourcesDeps, actor: Actor, id: string, patch: DataSourcePatch) {
  const current = await findDataSource(ctx.db, actor.workspaceId, id);
  if (!current) throw sourceNotFound(id);
  const newUrl = patch.url !== undefined && patch.url !== current.url_masked && patch.url !== ctx.secrets.open(current.url_enc) ? patch.url : undefined;
  if (newUrl !== undefined) await requireSourceUrl(ctx, current.kind, newUrl);
  return ctx.db.transaction().execute(async (trx) => {
    const locked = await lockDataSource(trx, ctx.seam, actor.workspaceId, id);
    if (!locked) throw sourceNotFound(id);
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    if (patch.name !== undefined && patch.name !== locked.name) changes.name = { from: locked.name, to: patch.name };
    if (newUrl !== undefined) changes.url = { from: locked.url_masked, to: maskSourceUrl(newUrl) };
    if (Object.keys(changes).length === 0) return toDataSource(locked);
    const now = ctx.clock.now();
    const updated: DataSourceRow = {
      ...locked,
      name: patch.name ?? locked.name,
      ...(newUrl !== undefined ? { url_enc: ctx.secrets.seal(newUrl), url_masked: maskSourceUrl(newUrl) } : {}),
      updated_at: now,
    };
    await updateDataSource(trx, id, { name: updated.name, url_enc: updated.url_enc, url_masked: updated.url_masked, updated_at: now });
    await auditSource(trx, actor, 'data_source.updated', id, { changes }, now);
    return { ...toDataSource(updated), ...(newUrl !== undefined ? { url: newUrl } : {}) };
  });
}

/** Deletes the source; refused (409) while fact tables read it. */
export async function removeDataSource(ctx: DataSourcesDeps, actor: Actor, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = await lockDataSource(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw sourceNotFound(id);
    const referrers = await factTablesOf(trx, id);
    if (referrers.length > 0) {
      const shown = referrers.slice(0, 10).map((table) => `"${table.name}"`);
      const base = problems.dataSourceInUse(
        `fact tables or assignment sources read this source (${shown.join(', ')}${referrers.length > 10 ? ' and more' : ''}); delete them first`,
      );
      throw new Problem(409, base.detail, { type: base.type, title: base.title, extensions: { referrers } });
    }
    await deleteDataSource(trx, id);
    await auditSource(trx, actor, 'data_source.deleted', id, { name: current.name, kind: current.kind, url: current.url_masked }, ctx.clock.now());
  });
}

/** Connects, asks the version, and records the outcome (never the URL) in the audit log. */
export async function testDataSource(ctx: DataSourcesDeps, actor: Actor, id: string): Promise<DataSourceTestResult> {
  const row = await findDataSource(ctx.db, actor.workspaceId, id);
  if (!row) throw sourceNotFound(id);
  const started = performance.now();
  let result: DataSourceTestResult;
  try {
    const version = await withSource(row.kind, ctx.secrets.open(row.url_enc), limitsOf(ctx), (session) => session.version());
    result = { ok: true, server_version: version, duration_ms: Math.round(performance.now() - started), error: null };
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    result = { ok: false, server_version: null, duration_ms: Math.round(performance.now() - started), error: error.message };
  }
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await lockDataSource(trx, ctx.seam, actor.workspaceId, id))) throw sourceNotFound(id);
    await auditSource(trx, actor, 'data_source.tested', id, { ok: result.ok, server_version: result.server_version, error: result.error }, ctx.clock.now());
  });
  return result;
}
