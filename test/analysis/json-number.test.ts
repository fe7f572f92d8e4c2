import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { parsePropertyPath } from '../../src/features/metrics/property-path.js';
import { newId } from '../../src/lib/ids.js';
import { describeEachStore } from '../support/each-dialect.js';

// The seam reads the number a sum or mean metric aggregates; both databases must agree on what
// is a number and must resolve any key a property_path may name.
const PROPERTIES = {
  amount: 12.5,
  integer: 7,
  big: 1e21,
  negative: -3,
  text: '12',
  yes: true,
  nothing: null,
  list: [1, 2],
  order: { 'total value': 40, 'a"b': 1.25, 'back\\slash': 2, 'dot.ted': 3, "it's": 4, nested: { deep: 5 } },
};

const CASES: Array<[string, number | null]> = [
  ['amount', 12.5],
  ['$.integer', 7],
  ['big', 1e21],
  ['negative', -3],
  ['text', null],
  ['yes', null],
  ['nothing', null],
  ['list', null],
  ['order', null],
  ['missing', null],
  ['amount.deeper', null],
  ['order["total value"]', 40],
  ["order['a\"b']", 1.25],
  ['order["back\\\\slash"]', 2],
  ['order["dot.ted"]', 3],
  ['order["it\'s"]', 4],
  ['order.nested.deep', 5],
];

describeEachStore('analysis: the JSON number at a property_path', (server) => {
  it('reads JSON numbers only, at any key a property_path can name', async () => {
    const { ctx } = server();
    const id = newId();
    await ctx.db
      .insertInto('events')
      .values({
        id,
        workspace_id: 'w',
        unit_id: 'u',
        event_key: 'e',
        properties: JSON.stringify(PROPERTIES),
        occurred_at: 0,
        received_at: 0,
        late: 0,
        client_event_id: null,
      })
      .execute();
    for (const [path, expected] of CASES) {
      const value = ctx.seam.jsonNumberAt('e.properties', parsePropertyPath(path));
      const result = await sql<{ value: unknown }>`SELECT ${value} AS value FROM events AS e WHERE e.id = ${id}`.execute(ctx.db);
      const read = result.rows[0]?.value;
      expect(read === null ? null : Number(read), path).toBe(expected);
    }
  });
});
