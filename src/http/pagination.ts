import type { SelectQueryBuilder } from 'kysely';
import { problems } from './problems.js';

export interface PageParams {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ after: id })).toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (parsed && typeof parsed === 'object' && typeof (parsed as { after?: unknown }).after === 'string') {
      return (parsed as { after: string }).after;
    }
  } catch {
    // falls through to the problem below
  }
  throw problems.invalidParameters([{ parameter: 'cursor', message: 'is not a cursor this API issued' }]);
}

/**
 * Keyset pagination on the ULID primary key (ULIDs sort by creation time), so pages stay
 * stable while rows are added. Every list endpoint goes through here.
 */
export async function paginate<DB, TB extends keyof DB, Row extends { id: string }, Out>(
  query: SelectQueryBuilder<DB, TB, Row>,
  idColumn: string,
  params: PageParams,
  toItem: (row: Row) => Out,
  order: 'asc' | 'desc' = 'asc',
): Promise<Page<Out>> {
  const limit = Math.min(params.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  let q = query;
  if (params.cursor) {
    const after = decodeCursor(params.cursor);
    // The column name is ours (never user input); Kysely's dynamic reference keeps it typed loosely.
    q = q.where(idColumn as never, order === 'asc' ? '>' : '<', after as never);
  }
  const rows = await q
    .orderBy(idColumn as never, order)
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toItem),
    next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}
