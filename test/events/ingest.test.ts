import { expect, it } from 'vitest';
import { describeIngest, drained, storedEvents, uniqueEventId } from './support.js';

const DAY_MS = 24 * 60 * 60 * 1000;

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level++) value = { inner: value };
  return value;
}

// Validation does not depend on where events are buffered, so it runs on the embedded buffer;
// the behaviour that does (de-duplication, back-pressure) runs on every buffer in dedupe.test.ts.
describeIngest(
  'POST /v1/events',
  (setup) => {
    const track = (body: unknown, key = setup().clientKey) => setup().server.request('POST', '/v1/events', { key, body });

    it('acknowledges a valid event with 202 and stores it after the acknowledgement', async () => {
      const occurredAt = new Date(Date.now() - 60_000).toISOString();
      const id = uniqueEventId();
      const response = await track({
        event_key: 'checkout.completed',
        unit_id: 'user-1',
        properties: { amount: 12.5, items: ['a'] },
        occurred_at: occurredAt,
        client_event_id: id,
      });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ accepted: true, idempotent_replay: false });
      await drained(setup().server);
      const stored = (await storedEvents(setup().server, setup().workspaceId)).find((row) => row.client_event_id === id);
      expect(stored).toMatchObject({ unit_id: 'user-1', event_key: 'checkout.completed', occurred_at: Date.parse(occurredAt), late: 0 });
      expect(JSON.parse(stored!.properties)).toEqual({ amount: 12.5, items: ['a'] });
      expect(stored!.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(stored!.received_at).toBeGreaterThanOrEqual(stored!.occurred_at);
    });

    it('uses the time received when occurred_at is missing, and {} for missing properties', async () => {
      const before = Date.now();
      const response = await track({ event_key: 'signup', unit_id: 'user-no-time' });
      expect(response.status).toBe(202);
      await drained(setup().server);
      const stored = (await storedEvents(setup().server, setup().workspaceId)).find((row) => row.unit_id === 'user-no-time');
      expect(stored?.occurred_at).toBe(stored?.received_at);
      expect(stored!.occurred_at).toBeGreaterThanOrEqual(before);
      expect(stored).toMatchObject({ properties: '{}', client_event_id: null, late: 0 });
    });

    it('accepts an event 7 to 30 days old and marks it late', async () => {
      const response = await track({ event_key: 'late.one', unit_id: 'user-late', occurred_at: new Date(Date.now() - 10 * DAY_MS).toISOString() });
      expect(response.status).toBe(202);
      await drained(setup().server);
      const stored = (await storedEvents(setup().server, setup().workspaceId)).find((row) => row.unit_id === 'user-late');
      expect(stored?.late).toBe(1);
    });

    it('answers 412 with a problem for an event more than 30 days old', async () => {
      const response = await track({ event_key: 'too.old', unit_id: 'u', occurred_at: new Date(Date.now() - 31 * DAY_MS).toISOString() });
      expect(response.status).toBe(412);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 412, title: 'Precondition Failed', errors: [{ pointer: '/occurred_at' }] });
      expect(response.body.detail).toMatch(/30 days/);
    });

    it('refuses more than 5 minutes in the future with 422, and allows a little clock skew', async () => {
      const future = await track({ event_key: 'future', unit_id: 'u', occurred_at: new Date(Date.now() + 6 * 60_000).toISOString() });
      expect(future.status).toBe(422);
      expect(future.body.errors).toEqual([{ pointer: '/occurred_at', message: expect.stringMatching(/5 minutes in the future/) }]);
      const skewed = await track({ event_key: 'future', unit_id: 'u', occurred_at: new Date(Date.now() + 4 * 60_000).toISOString() });
      expect(skewed.status).toBe(202);
    });

    it.each([
      ['an event_key outside the pattern', { event_key: 'Checkout Completed', unit_id: 'u' }, '/event_key'],
      ['an event_key of 129 characters', { event_key: 'a'.repeat(129), unit_id: 'u' }, '/event_key'],
      ['a missing event_key', { unit_id: 'u' }, '/event_key'],
      ['an empty unit_id', { event_key: 'k', unit_id: '' }, '/unit_id'],
      ['a unit_id of 257 characters', { event_key: 'k', unit_id: 'u'.repeat(257) }, '/unit_id'],
      ['properties that are not an object', { event_key: 'k', unit_id: 'u', properties: [1, 2] }, '/properties'],
      ['properties of more than 16 KB', { event_key: 'k', unit_id: 'u', properties: { blob: 'x'.repeat(16 * 1024) } }, '/properties'],
      ['properties nested 9 deep', { event_key: 'k', unit_id: 'u', properties: nested(9) }, '/properties'],
      ['a client_event_id of 129 characters', { event_key: 'k', unit_id: 'u', client_event_id: 'c'.repeat(129) }, '/client_event_id'],
      ['an occurred_at that is not a date-time', { event_key: 'k', unit_id: 'u', occurred_at: 'yesterday' }, '/occurred_at'],
      ['an unknown field', { event_key: 'k', unit_id: 'u', colour: 'red' }, '/colour'],
    ])('answers 422 with a pointer for %s', async (_label, body, pointer) => {
      const response = await track(body);
      expect(response.status).toBe(422);
      expect(response.body.type).toMatch(/validation/);
      expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });

    it('accepts properties of exactly the limits (16 KB, depth 8)', async () => {
      const blob = 'x'.repeat(16 * 1024 - JSON.stringify({ blob: '' }).length);
      expect((await track({ event_key: 'k', unit_id: 'u', properties: { blob } })).status).toBe(202);
      expect((await track({ event_key: 'k', unit_id: 'u', properties: nested(8) })).status).toBe(202);
    });

    it('needs an API key; client and server keys may both track', async () => {
      expect((await track({ event_key: 'k', unit_id: 'u' }, '')).status).toBe(401);
      expect((await track({ event_key: 'k', unit_id: 'u' }, setup().serverKey)).status).toBe(202);
    });

    it('shows the buffer to server keys only', async () => {
      const status = await setup().server.request('GET', '/v1/events/buffer', { key: setup().serverKey });
      expect(status.status).toBe(200);
      expect(status.body).toEqual({ kind: 'embedded', pending: expect.any(Number), max_pending: 100_000 });
      expect((await setup().server.request('GET', '/v1/events/buffer', { key: setup().clientKey })).status).toBe(403);
    });
  },
  { modes: ['embedded'] },
);

describeIngest(
  'POST /v1/events/batch',
  (setup) => {
    const batch = (body: unknown) => setup().server.request('POST', '/v1/events/batch', { key: setup().clientKey, body });

    it('accepts the good events and names each bad one by index and reason', async () => {
      const events = [
        { event_key: 'page.view', unit_id: 'batch-user', client_event_id: uniqueEventId() },
        { event_key: 'BAD KEY', unit_id: 'batch-user' },
        { event_key: 'page.view', unit_id: 'batch-user', occurred_at: new Date(Date.now() - 40 * DAY_MS).toISOString() },
        { event_key: 'page.view', unit_id: 'batch-user', occurred_at: new Date(Date.now() + DAY_MS).toISOString() },
        'not an event',
        { event_key: 'page.view', unit_id: 'batch-user', properties: { late: true }, occurred_at: new Date(Date.now() - 8 * DAY_MS).toISOString() },
      ];
      const response = await batch({ events });
      expect(response.status).toBe(202);
      expect(response.body.accepted_count).toBe(2);
      expect(response.body.idempotent_replay_count).toBe(0);
      expect(response.body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2, 3, 4]);
      const reasons = response.body.rejected.map((r: { reason: string }) => r.reason);
      expect(reasons[0]).toMatch(/^\/events\/1\/event_key: /);
      expect(reasons[1]).toMatch(/\/events\/2\/occurred_at: .*30 days/);
      expect(reasons[2]).toMatch(/\/events\/3\/occurred_at: .*future/);
      expect(reasons[3]).toMatch(/\/events\/4: must be object/);
      await drained(setup().server);
      const stored = (await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.unit_id === 'batch-user');
      expect(stored.map((row) => row.late).sort()).toEqual([0, 1]);
    });

    it('counts a repeated client_event_id inside one batch once', async () => {
      const id = uniqueEventId();
      const response = await batch({ events: [1, 2, 3].map(() => ({ event_key: 'dup', unit_id: 'dup-user', client_event_id: id })) });
      expect(response.body).toEqual({ accepted_count: 3, idempotent_replay_count: 2, rejected: [] });
      await drained(setup().server);
      expect((await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.client_event_id === id)).toHaveLength(1);
    });

    it('takes 500 events and refuses 501', async () => {
      const events = (n: number) => Array.from({ length: n }, (_, i) => ({ event_key: 'bulk', unit_id: `bulk-${i}` }));
      expect((await batch({ events: events(500) })).body).toMatchObject({ accepted_count: 500, rejected: [] });
      const tooMany = await batch({ events: events(501) });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.errors).toEqual([{ pointer: '/events', message: expect.stringMatching(/500/) }]);
    });

    it.each([
      ['a body that is not an object', [{ event_key: 'k', unit_id: 'u' }], ''],
      ['a missing events array', {}, '/events'],
      ['events that is not an array', { events: { event_key: 'k', unit_id: 'u' } }, '/events'],
      ['an empty events array', { events: [] }, '/events'],
    ])('answers 422 for %s', async (_label, body, pointer) => {
      const response = await batch(body);
      expect(response.status).toBe(422);
      expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  },
  { modes: ['embedded'] },
);
