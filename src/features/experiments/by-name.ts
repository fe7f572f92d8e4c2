import { sql, type SelectQueryBuilder } from 'kysely';
import type { DialectSeam } from '../../db/dialect.js';
import type { Database } from '../../db/schema.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page, type PageParams } from '../../http/pagination.js';
import { problems } from '../../http/problems.js';
import type { ExperimentRow } from './read.js';

// The list by name (order=name), the same on SQLite and PostgreSQL: the sort key is the name with
// A-Z lowered (nothing else folded, as no database folds the rest alike), compared in code-point
// order, ties by id; keyset pagination on (key, id). "apple" and "Apple" sit together; "Émile"
// sorts after "zebra", as its first code point does.

/** The sort key as the database computes it (seam.asciiLowerCase), for the cursor. */
function nameKey(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

function encodeCursor(row: ExperimentRow): string {
  return Buffer.from(JSON.stringify({ name: nameKey(row.name), after: row.id })).toString('base64url');
}

function decodeCursor(cursor: string): { name: string; after: string } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { name?: unknown; after?: unknown };
    if (typeof parsed.name === 'string' && typeof parsed.after === 'string') return { name: parsed.name, after: parsed.after };
  } catch {
    // falls through to the problem below
  }
  throw problems.invalidParameters([{ parameter: 'cursor', message: 'is not a cursor this API issued for order=name' }]);
}

type ExperimentQuery = SelectQueryBuilder<Database, 'experiments', ExperimentRow>;

export async function pageByName<Out>(seam: DialectSeam, query: ExperimentQuery, params: PageParams, toItem: (row: ExperimentRow) => Out): Promise<Page<Out>> {
  const limit = Math.min(params.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const key = seam.inCodePointOrder(seam.asciiLowerCase(sql.ref('name')));
  let q = query;
  if (params.cursor) {
    const { name, after } = decodeCursor(params.cursor);
    q = q.where(sql<boolean>`(${key} > ${name} or (${key} = ${name} and id > ${after}))`);
  }
  const rows = await q
    .orderBy(key as never, 'asc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toItem), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}
