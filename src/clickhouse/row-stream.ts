/**
 * Reading a result too large to hold, a batch of rows at a time (the totals added up from every
 * unit's rollups: one row per live unit). A server streams its HTTP response. The embedded
 * engine's connection (chdb/connection) materializes a whole result in one buffer before it hands
 * over the first row: at 20M units that result was about 4 GB and the process died of a full
 * JavaScript heap. So the embedded engine writes the result to a file of its own (INTO OUTFILE),
 * and the rows are read back from it a line at a time.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';

/** A SELECT, its parameters and settings, read as JSONEachRow. */
export interface RowRead {
  query: string;
  query_params: Record<string, unknown>;
  clickhouse_settings?: ClickHouseSettings;
}

export type RowBatches = (read: RowRead, batchSize: number) => AsyncIterable<Record<string, unknown>[]>;

/** A server's rows, as its response streams them. */
export function serverRowBatches(client: ClickHouseClient): RowBatches {
  return async function* (read, batchSize) {
    const result = await client.query({ ...read, format: 'JSONEachRow' });
    let batch: Record<string, unknown>[] = [];
    for await (const rows of result.stream()) {
      for (const row of rows as Array<{ json(): Record<string, unknown> }>) batch.push(row.json());
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  };
}

/**
 * Where the embedded engine at `enginePath` writes results to be read back: a folder in its own
 * directory, which has the room its data needs; emptied here, since only the process that holds
 * the engine writes there and one killed mid-read leaves its file behind.
 */
export function exportDirectory(enginePath: string): string {
  const directory = enginePath === ':memory:' ? path.join(os.tmpdir(), `verdict-chdb-exports-${randomUUID()}`) : path.join(enginePath, 'verdict-exports');
  fs.rmSync(directory, { recursive: true, force: true });
  return directory;
}

/** ClickHouse's quoting of a string literal. */
function literal(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The embedded engine's rows, written by the engine to a file in `directory` and read back a line at a time. */
export function embeddedRowBatches(client: ClickHouseClient, directory: string): RowBatches {
  return async function* (read, batchSize) {
    fs.mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `${randomUUID()}.jsonl`);
    try {
      const query = `SELECT * FROM (${read.query}) INTO OUTFILE ${literal(file)} FORMAT JSONEachRow`;
      await client.command({ ...read, query });
      const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
      let batch: Record<string, unknown>[] = [];
      for await (const line of lines) {
        if (line === '') continue;
        batch.push(JSON.parse(line) as Record<string, unknown>);
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      fs.rmSync(file, { force: true });
    }
  };
}
