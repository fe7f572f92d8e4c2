/**
 * Why a data source could not answer: `refused` (the network rule), `unreachable` (no connection,
 * wrong credentials, no such database), `timeout` (the statement ran past its limit) or `query`
 * (the source refused the SQL). Messages are fit for a response: no URL or credential in them.
 */
export type SourceErrorReason = 'refused' | 'unreachable' | 'timeout' | 'query';

export class SourceError extends Error {
  override name = 'SourceError';
  constructor(
    readonly reason: SourceErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/** A column as the source describes the query's result. */
export interface DescribedColumn {
  name: string;
  /** The source's own type name (PostgreSQL's format_type, ClickHouse's DESCRIBE). */
  type: string;
}

/** Positional parameters (PostgreSQL) or named ones (ClickHouse). */
export type QueryParams = unknown[] | Record<string, unknown>;

/** One connection to a source; every statement runs read-only and bounded in time. */
export interface SourceSession {
  version(): Promise<string>;
  /** The columns the query returns, without reading its rows. */
  describe(sql: string): Promise<DescribedColumn[]>;
  /**
   * Rows of a query that aggregates (Verdict only asks for aggregates), with its parameters:
   * PostgreSQL's positional ($1, $2 ...), ClickHouse's named ({name:Type}).
   */
  rows<Row extends Record<string, unknown>>(sql: string, params?: QueryParams): Promise<Row[]>;
  close(): Promise<void>;
}
