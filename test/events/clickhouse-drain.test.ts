import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistToClickHouse } from '../../src/clickhouse/events.js';
import type { ClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { drainEvents } from '../analysis/support.js';

/**
 * The drain into the embedded ClickHouse engine writes its rows as TabSeparated text
 * (src/clickhouse/event-rows.ts), where a tab, a line break or a backslash inside a value would
 * cut or change the row unless escaped: every event sent through the API is stored with its unit,
 * key and properties exactly as it was sent, whatever characters they hold. And the look-up for
 * an earlier attempt's rows, which the embedded engine skips while this process knows none can
 * exist, still runs after an attempt that rolled back, whichever drainer takes the number back.
 */
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse drain tests are skipped.`);

const AWKWARD = ['tab\there', 'line\nbreak', 'back\\slash', '\\N', '\\t literally', 'carriage\rreturn', 'ünïcødé 🎲', "quote\"d 'single'", ' ', 'trailing\\'];

interface StoredRow {
  id: string;
  unit_id: string;
  event_key: string;
  properties: string;
  occurred_at: string;
}

async function storedRows(ch: ClickHouse, workspaceId: string): Promise<StoredRow[]> {
  const result = await ch.client.query({
    query: 'SELECT id, unit_id, event_key, properties, toString(occurred_at) AS occurred_at FROM events WHERE workspace_id = {workspace:String} ORDER BY id',
    query_params: { workspace: workspaceId },
    format: 'JSONEachRow',
  });
  return result.json<StoredRow>();
}

suite(`the drain into ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { config: { clickhouse: TEST_CLICKHOUSE } });
  });
  afterAll(async () => server?.close());

  it('stores every event with its unit, key and properties as sent, whatever characters they hold', async () => {
    const { key, workspaceId } = await server.bootstrap('Drain escapes');
    const occurredAt = Date.now() - 60 * 60_000;
    const sent = AWKWARD.map((text, index) => ({
      event_key: `key_${index}`,
      unit_id: text,
      occurred_at: new Date(occurredAt + index).toISOString(),
      properties: { note: text, [text]: index, nested: { list: [text, 1.5, null] } },
    }));
    const response = await server.request('POST', '/v1/events/batch', { key, body: { events: sent } });
    expect(response.status, response.text).toBe(202);
    expect(response.body.rejected).toEqual([]);
    await drainEvents(server);

    const stored = await storedRows(server.ctx.clickhouse!, workspaceId);
    const byKey = (a: { event_key: string }, b: { event_key: string }) => a.event_key.localeCompare(b.event_key);
    expect(
      stored
        .map((row) => ({ event_key: row.event_key, unit_id: row.unit_id, properties: JSON.parse(row.properties), occurred_at: Number(row.occurred_at) }))
        .sort(byKey),
    ).toEqual(sent.map((event) => ({ ...event, occurred_at: Date.parse(event.occurred_at) })).sort(byKey));
    expect(stored.map((row) => row.properties).sort()).toEqual(sent.map((event) => JSON.stringify(event.properties)).sort());
  });

  it("deletes a rolled-back attempt's rows when the drainer takes its number back", async () => {
    const { key, workspaceId } = await server.bootstrap('Drain retried');
    const ch = server.ctx.clickhouse!;
    const send = async (unit: string) => {
      const response = await server.request('POST', '/v1/events/batch', { key, body: { events: [{ event_key: 'seen', unit_id: unit }] } });
      expect(response.status, response.text).toBe(202);
      await drainEvents(server);
    };
    // The drainer has committed a drain in this process: it knows the numbers it used so far.
    await send('before');
    const ghost = {
      id: '01JGHOSTGHOSTGHOSTGHOSTGHO',
      workspace_id: workspaceId,
      unit_id: 'ghost',
      event_key: 'seen',
      properties: '{}',
      occurred_at: Date.UTC(2033, 2, 1),
      received_at: Date.UTC(2033, 2, 1),
      late: 0 as const,
      client_event_id: null,
    };
    // Inserted into ClickHouse by a persist function of its own, then the transaction rolls back: the number comes back.
    const rolledBack = new Error('rolled back after the insert');
    await expect(
      server.ctx.db.transaction().execute(async (trx) => {
        await persistToClickHouse(ch)(trx, [ghost]);
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect((await storedRows(ch, workspaceId)).map((row) => row.unit_id).sort()).toEqual(['before', 'ghost']);

    await send('after');
    expect((await storedRows(ch, workspaceId)).map((row) => row.unit_id).sort()).toEqual(['after', 'before']);
  });
});
