import { CompiledQuery, type Compilable } from 'kysely';
import type { Executor } from './database.js';

/** Builds the statement for a handful of rows; only ever called once per statement size. */
export type BuildInsert<Row> = (executor: Executor, rows: Row[]) => Compilable;

/** Statement sizes are powers of two up to this, so a few prepared statements serve any count. */
const LARGEST_STATEMENT = 256;

/**
 * Multi-row INSERTs of one fixed shape for the ingest hot path. Building Kysely's query tree
 * for thousands of values costs more than SQLite takes to run it, so each statement size is
 * compiled by Kysely once (which keeps each database's own SQL and placeholders) and then
 * reused with fresh parameters. Sizes are powers of two so the statement cache stays small.
 */
export class BulkInsert<Row extends object> {
  readonly #columns: readonly (keyof Row & string)[];
  readonly #build: BuildInsert<Row>;
  /** Compiled SQL by dialect (the one-row statement's SQL tells them apart) and statement size. */
  readonly #sqlByDialect = new Map<string, Map<number, string>>();

  constructor(columns: readonly (keyof Row & string)[], build: BuildInsert<Row>) {
    this.#columns = columns;
    this.#build = build;
  }

  /** Inserts every row, in order, and returns what the statements return (RETURNING rows). */
  async execute<Result = unknown>(executor: Executor, rows: readonly Row[]): Promise<Result[]> {
    const results: Result[] = [];
    const first = rows[0];
    if (first === undefined) return results;
    // One process may talk to SQLite and PostgreSQL (the tests do): SQL is cached per dialect.
    const dialect = this.#build(executor, [this.#shaped(first)]).compile().sql;
    let sqlBySize = this.#sqlByDialect.get(dialect);
    if (!sqlBySize) this.#sqlByDialect.set(dialect, (sqlBySize = new Map()));
    let start = 0;
    while (start < rows.length) {
      const size = statementSize(rows.length - start);
      const slice = rows.slice(start, start + size);
      const sql = sqlBySize.get(size) ?? this.#compile(executor, slice, sqlBySize);
      const outcome = await executor.executeQuery<Result>(CompiledQuery.raw(sql, this.#parameters(slice)));
      results.push(...outcome.rows);
      start += size;
    }
    return results;
  }

  #parameters(rows: readonly Row[]): unknown[] {
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of this.#columns) parameters.push(row[column]);
    return parameters;
  }

  /** A copy with exactly our columns in our order, so compiled placeholders line up with #parameters. */
  #shaped(row: Row): Row {
    return Object.fromEntries(this.#columns.map((column) => [column, row[column]])) as Row;
  }

  #compile(executor: Executor, rows: readonly Row[], sqlBySize: Map<number, string>): string {
    const compiled = this.#build(
      executor,
      rows.map((row) => this.#shaped(row)),
    ).compile();
    const expected = this.#parameters(rows);
    if (compiled.parameters.length !== expected.length || compiled.parameters.some((value, index) => value !== expected[index])) {
      throw new Error('BulkInsert: the compiled statement does not bind the columns in the declared order');
    }
    sqlBySize.set(rows.length, compiled.sql);
    return compiled.sql;
  }
}

function statementSize(remaining: number): number {
  let size = LARGEST_STATEMENT;
  while (size > remaining) size /= 2;
  return size;
}
