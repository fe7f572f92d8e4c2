// The experiment list by name (order=name): A-Z folded to a-z and nothing else, compared in
// code-point order, ties oldest first, so SQLite and PostgreSQL (whatever its locale) give one
// order. The expected order is computed here from the names as UTF-8 bytes, independently of the
// server; each dialect is held to it, so the two agree.
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

// Case pairs, accents (not folded: 'Émile' before 'ébène', as É is before é), digits,
// punctuation, a tie, a character beyond the BMP (UTF-16 order would put it before the full-width
// letter; code-point order puts it after).
const NAMES = [
  'banana',
  'Apple',
  'apple pie',
  'apple',
  'Zebra',
  'Émile',
  'émile',
  'eclair',
  '10 items',
  '9 lives',
  'a_b',
  'a-b',
  'aB',
  'Ab',
  '😀 party',
  'Ｆull width',
  'ß',
];

/** The byte order of UTF-8 is code-point order. */
function expectedOrder(created: Array<{ key: string; name: string }>): string[] {
  const sortKey = (name: string) =>
    Buffer.from(
      name.replace(/[A-Z]/g, (letter) => letter.toLowerCase()),
      'utf8',
    );
  return created
    .map((experiment, index) => ({ ...experiment, index }))
    .sort((a, b) => Buffer.compare(sortKey(a.name), sortKey(b.name)) || a.index - b.index)
    .map((experiment) => experiment.key);
}

describeEachDialect('the experiment list by name', (server) => {
  let key: string;
  let expected: string[];
  beforeAll(async () => {
    const boot = await server().bootstrap();
    key = boot.key;
    const created: Array<{ key: string; name: string }> = [];
    // One at a time: creation order breaks ties (ids are time-ordered).
    for (const [index, name] of NAMES.entries()) {
      const response = await server().request('POST', '/v1/experiments', { key, body: experimentBody(boot.environmentId, { key: `by-name-${index}`, name }) });
      expect(response.status, response.text).toBe(201);
      created.push({ key: response.body.key, name });
    }
    expected = expectedOrder(created);
  });

  async function keysOf(query: string): Promise<{ keys: string[]; cursor: string | null }> {
    const response = await server().request('GET', `/v1/experiments?order=name&${query}`, { key });
    expect(response.status, response.text).toBe(200);
    return { keys: response.body.data.map((experiment: { key: string }) => experiment.key), cursor: response.body.next_cursor };
  }

  it('orders by the name with A-Z folded, in code-point order, ties oldest first', async () => {
    const { keys } = await keysOf('limit=200');
    expect(keys).toEqual(expected);
    const names = keys.map((k) => NAMES[Number(k.replace('by-name-', ''))]);
    // What a person sees: case pairs together, the tie in creation order, accents after z.
    expect(names.slice(0, 2)).toEqual(['10 items', '9 lives']);
    expect(names.indexOf('aB')).toBe(names.indexOf('Ab') - 1);
    expect(names.indexOf('Apple')).toBe(names.indexOf('apple') - 1);
    expect(names.indexOf('Zebra')).toBeLessThan(names.indexOf('ß'));
    expect(names.at(-1)).toBe('😀 party');
  });

  it('pages through the same order, filters within it, and refuses another order’s cursor', async () => {
    const paged: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { keys: string[]; cursor: string | null } = await keysOf(`limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.keys);
      cursor = page.cursor;
    }
    expect(paged).toEqual(expected);
    const apples = (await keysOf(`q=apple&limit=200`)).keys;
    expect(apples).toEqual(expected.filter((k) => /apple/i.test(NAMES[Number(k.replace('by-name-', ''))] ?? '')));
    const other = await server().request('GET', '/v1/experiments?order=updated&limit=1', { key });
    const foreign = await server().request('GET', `/v1/experiments?order=name&cursor=${other.body.next_cursor}`, { key });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('content-type')).toContain('application/problem+json');
  });
});
