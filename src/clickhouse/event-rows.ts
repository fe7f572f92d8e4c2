/**
 * The drain's insert of a batch into ClickHouse's events table (clickhouse/events.ts decides what
 * goes in and under which drain number). Into the embedded engine the rows go as TabSeparated
 * bytes written straight from the buffered events: no object per row, no JSON text per row, and
 * the engine's parser reads positional, tab-delimited fields instead of keyed JSON objects
 * (docs/analysis.md "ClickHouse", the drain's throughput). A server takes the client's JSONEachRow insert.
 *
 * The insert runs synchronously (async_insert = 0): the embedded engine turns asynchronous inserts
 * on by default, and with it every drain waited for the engine's flush timer (50-200 ms) before
 * its acknowledgement, idle, whatever the batch's size.
 */
import { randomUUID } from 'node:crypto';
import type { BufferedEvent } from '../buffer/types.js';
import type { ClickHouse } from './client.js';
import { clickhouseJsonText } from './json-text.js';

const EVENT_COLUMNS = ['id', 'workspace_id', 'unit_id', 'event_key', 'properties', 'occurred_at', 'received_at', 'late', 'drain_seq'] as const;

/** The characters TabSeparated escapes in a string: the field and row delimiters, the escape itself, and a carriage return. */
const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** `value` as a TabSeparated string field (nearly every value has nothing to escape: one regex test). */
export function tabSeparatedField(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, (char) => ESCAPES[char] as string) : value;
}

/** The events as TabSeparated rows in EVENT_COLUMNS' order, every row under drain number `drainSeq`. */
export function tabSeparatedRows(events: readonly BufferedEvent[], drainSeq: number): Buffer {
  let text = '';
  for (const event of events) {
    text +=
      `${tabSeparatedField(event.id)}\t${tabSeparatedField(event.workspace_id)}\t${tabSeparatedField(event.unit_id)}\t` +
      `${tabSeparatedField(event.event_key)}\t${tabSeparatedField(clickhouseJsonText(event.properties))}\t` +
      `${event.occurred_at}\t${event.received_at}\t${event.late}\t${drainSeq}\n`;
  }
  return Buffer.from(text);
}

/**
 * Inserts the events under drain number `drainSeq`, each attempt under an insert de-duplication
 * token of its own (clickhouse/events.ts says why).
 */
export async function insertDrainedEvents(ch: ClickHouse, events: readonly BufferedEvent[], drainSeq: number): Promise<void> {
  const settings = { async_insert: 0 as const, insert_deduplicate: 0 as const, insert_deduplication_token: randomUUID() };
  if (ch.insertTabSeparated) {
    await ch.insertTabSeparated({ table: 'events', columns: EVENT_COLUMNS, rows: tabSeparatedRows(events, drainSeq), settings });
    return;
  }
  const values = events.map((event) => ({
    id: event.id,
    workspace_id: event.workspace_id,
    unit_id: event.unit_id,
    event_key: event.event_key,
    properties: clickhouseJsonText(event.properties),
    occurred_at: event.occurred_at,
    received_at: event.received_at,
    late: event.late,
    drain_seq: drainSeq,
  }));
  await ch.client.insert({ table: 'events', values, format: 'JSONEachRow', clickhouse_settings: settings });
}
