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
    const sqlBySize = this.#sqlBySizeFor(executor, first);
    for (const slice of this.slices(rows)) {
      const sql = sqlBySize.get(slice.length) ?? this.#compile(executor, slice, sqlBySize);
      const outcome = await executor.executeQuery<Result>(CompiledQuery.raw(sql, this.parametersOf(slice)));
      results.push(...outcome.rows);
    }
    return results;
  }

  /** The rows cut into statement sizes (powers of two, largest first), in order. */
  *slices(rows: readonly Row[]): Generator<readonly Row[]> {
    let start = 0;
    while (start < rows.length) {
      const size = statementSize(rows.length - start);
      yield rows.slice(start, start + size);
      start += size;
    }
  }

  /**
   * The SQL that inserts exactly these rows (a slice from `slices`) in the executor's dialect,
   * compiled once per size. With `parametersOf` it also serves a caller that prepares the
   * statement on its own connection (buffer/prepared-append.ts).
   */
  sqlOf(executor: Executor, slice: readonly Row[]): string {
    const first = slice[0];
    if (first === undefined) throw new Error('BulkInsert: no rows to insert');
    const sqlBySize = this.#sqlBySizeFor(executor, first);
    return sqlBySize.get(slice.length) ?? this.#compile(executor, slice, sqlBySize);
  }

  /** The values of `rows`, column by column, in the order the statement binds them. */
  parametersOf(rows: readonly Row[]): unknown[] {
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of this.#columns) parameters.push(row[column]);
    return parameters;
  }

  /** The compiled statements of the executor's dialect, by size. */
  #sqlBySizeFor(executor: Executor, sample: Row): Map<number, string> {
    // One process may talk to SQLite and PostgreSQL (the tests do): SQL is cached per dialect.
    const dialect = this.#build(executor, [this.#shaped(sample)]).compile().sql;
    let sqlBySize = this.#sqlByDialect.get(dialect);
    if (!sqlBySize) this.#sqlByDialect.set(dialect, (sqlBySize = new Map()));
    return sqlBySize;
  }

  /** A copy with exactly our columns in our order, so compiled placeholders line up with parametersOf. */
  #shaped(row: Row): Row {
    return Object.fromEntries(this.#columns.map((column) => [column, row[column]])) as Row;
  }

  #compile(executor: Executor, rows: readonly Row[], sqlBySize: Map<number, string>): string {
    const compiled = this.#build(
      executor,
      rows.map((row) => this.#shaped(row)),
    ).compile();
    const expected = this.parametersOf(rows);
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
