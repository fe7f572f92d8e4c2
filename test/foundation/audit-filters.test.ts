import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { ApiResponse } from '../support/server.js';

// The audit log's filters by actor (issue #33: "who changed this?"): one API key's entries, every
// entry a key made, or those with no key behind them (the CLI, background jobs); workspace-scoped
// and validated, on both databases.

interface Entry {
  action: string;
  actor_id: string | null;
  target_id: string;
}

describeEachDialect('audit log filters by actor', (server) => {
  let key: string;
  let keyId: string;
  let otherKey: string;
  let otherKeyId: string;
  let foreignKeyId: string;

  const list = async (query: string, as = key): Promise<ApiResponse> => server().request('GET', `/v1/audit?limit=200&${query}`, { key: as });
  const entries = async (query: string): Promise<Entry[]> => {
    const response = await list(query);
    expect(response.status, response.text).toBe(200);
    return response.body.data as Entry[];
  };

  beforeAll(async () => {
    ({ key, keyId } = await server().bootstrap('Audited'));
    const created = await server().request('POST', '/v1/api-keys', { key, body: { name: 'growth team', kind: 'server' } });
    expect(created.status, created.text).toBe(201);
    otherKey = created.body.key;
    otherKeyId = created.body.id;
    await server().request('POST', '/v1/metrics', { key: otherKey, body: { key: 'buys', name: 'Buys', event_key: 'buy', kind: 'binary' } });
    await server().request('POST', '/v1/segments', { key, body: { key: 'staff', name: 'Staff', rule: null } });
    // Another workspace's key, with entries of its own.
    const foreign = await server().bootstrap('Elsewhere');
    foreignKeyId = foreign.keyId;
    await server().request('POST', '/v1/segments', { key: foreign.key, body: { key: 'theirs', name: 'Theirs', rule: null } });
  });

  it('lists one key’s entries with actor_id, and nothing for a key of another workspace', async () => {
    const byOther = await entries(`actor_id=${otherKeyId}`);
    expect(byOther.map((entry) => entry.action)).toEqual(['metric.created']);
    const byBootstrap = await entries(`actor_id=${keyId}`);
    expect(byBootstrap.map((entry) => entry.action)).toEqual(['segment.created', 'api_key.created']);
    expect(byBootstrap.every((entry) => entry.actor_id === keyId)).toBe(true);
    expect(await entries(`actor_id=${foreignKeyId}`)).toEqual([]);
    // Combined with the other filters (AND).
    expect(await entries(`actor_id=${keyId}&action=segment.created`)).toHaveLength(1);
    expect(await entries(`actor_id=${otherKeyId}&action=segment.created`)).toEqual([]);
  });

  it('tells entries of API keys from system entries with actor_type', async () => {
    // The bootstrap made the workspace, its environment and its first key with no key behind it.
    const system = await entries('actor_type=system');
    expect(system.map((entry) => entry.action).sort()).toEqual(['api_key.created', 'environment.created', 'workspace.created']);
    expect(system.every((entry) => entry.actor_id === null)).toBe(true);
    const byKeys = await entries('actor_type=api_key');
    expect(byKeys.map((entry) => entry.action).sort()).toEqual(['api_key.created', 'metric.created', 'segment.created']);
    expect(byKeys.every((entry) => entry.actor_id === keyId || entry.actor_id === otherKeyId)).toBe(true);
    expect(await entries(`actor_type=api_key&actor_id=${otherKeyId}`)).toHaveLength(1);
  });

  it('refuses a malformed actor, an unknown actor type, a key id with actor_type system and any empty filter, naming the parameter (400, as every bad query parameter)', async () => {
    for (const [query, parameter] of [
      ['actor_id=not-an-id', 'actor_id'],
      ['actor_id=', 'actor_id'],
      // Every empty filter is refused alike, rather than read as absent (which would list everything).
      ['action=', 'action'],
      ['target_type=', 'target_type'],
      ['target_id=', 'target_id'],
      ['since=', 'since'],
      ['until=', 'until'],
      ['actor_type=person', 'actor_type'],
      [`actor_id=${keyId}&actor_type=system`, 'actor_type'],
    ] as const) {
      const response = await list(query);
      expect(response.status, `${query}: ${response.text}`).toBe(400);
      expect(response.body.type).toBe('https://verdict.dev/problems/invalid-parameters');
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body.errors.map((error: { parameter: string }) => error.parameter)).toEqual([parameter]);
    }
  });
});
