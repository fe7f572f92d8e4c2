import type { SelectQueryBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page, type PageParams } from '../../http/pagination.js';
import { problems } from '../../http/problems.js';
import type { ExperimentRow } from './read.js';

// The list most recently changed first: keyset pagination on (updated_at, id), since many
// experiments can change in the same millisecond (a bulk retag, say) and a page must not skip one.

function encodeCursor(row: ExperimentRow): string {
  return Buffer.from(JSON.stringify({ updated: row.updated_at, after: row.id })).toString('base64url');
}

function decodeCursor(cursor: string): { updated: number; after: string } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { updated?: unknown; after?: unknown };
    if (typeof parsed.updated === 'number' && typeof parsed.after === 'string') return { updated: parsed.updated, after: parsed.after };
  } catch {
    // falls through to the problem below
  }
  throw problems.invalidParameters([{ parameter: 'cursor', message: 'is not a cursor this API issued for order=updated' }]);
}

type ExperimentQuery = SelectQueryBuilder<Database, 'experiments', ExperimentRow>;

export async function pageByRecentChange<Out>(query: ExperimentQuery, params: PageParams, toItem: (row: ExperimentRow) => Out): Promise<Page<Out>> {
  const limit = Math.min(params.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  let q = query;
  if (params.cursor) {
    const { updated, after } = decodeCursor(params.cursor);
    q = q.where((eb) => eb.or([eb('updated_at', '<', updated), eb.and([eb('updated_at', '=', updated), eb('id', '<', after)])]));
  }
  const rows = await q
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toItem), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}
