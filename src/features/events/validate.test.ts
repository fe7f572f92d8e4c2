import { describe, expect, it } from 'vitest';
import { checkEvent, describeRejection, EVENT_LIMITS, validateEvent } from './validate.js';

const NOW = Date.UTC(2030, 5, 15, 12, 0, 0);
const DAY = 24 * 60 * 60 * 1000;
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

describe('event rules beyond the schema', () => {
  it('builds the stored row: id, {} for missing properties, received time for missing occurred_at', () => {
    const result = checkEvent({ event_key: 'signup', unit_id: 'u1' }, 'ws', NOW);
    expect(result).toEqual({
      ok: true,
      event: {
        id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
        workspace_id: 'ws',
        unit_id: 'u1',
        event_key: 'signup',
        properties: '{}',
        occurred_at: NOW,
        received_at: NOW,
        late: 0,
        client_event_id: null,
      },
    });
  });

  it.each([
    ['6 days 23 hours old', -(7 * DAY - 3_600_000), 'late 0'],
    ['exactly 7 days old', -7 * DAY, 'late 1'],
    ['30 days old', -30 * DAY, 'late 1'],
    ['30 days and a second old', -(30 * DAY + 1000), 'too old'],
    ['5 minutes ahead', 5 * 60_000, 'late 0'],
    ['5 minutes and a second ahead', 5 * 60_000 + 1000, 'invalid'],
  ])('an event %s: %s', (_label, offset, expected) => {
    const result = checkEvent({ event_key: 'k', unit_id: 'u', occurred_at: at(offset) }, 'ws', NOW);
    if (expected.startsWith('late')) expect(result).toMatchObject({ ok: true, event: { late: Number(expected.slice(5)), occurred_at: NOW + offset } });
    else expect(result).toMatchObject({ ok: false, tooOld: expected === 'too old', errors: [{ pointer: '/occurred_at' }] });
  });

  it('answers 422 rather than 412 when an old event has other problems too', () => {
    const result = checkEvent({ event_key: 'k', unit_id: 'u', occurred_at: at(-40 * DAY), properties: { x: 'y'.repeat(20_000) } }, 'ws', NOW);
    expect(result).toMatchObject({ ok: false, tooOld: false });
  });

  it('measures properties in UTF-8 bytes of JSON', () => {
    // Each "é" is 2 bytes in UTF-8: 8,190 of them plus the JSON around them is just over 16 KB.
    const result = checkEvent({ event_key: 'k', unit_id: 'u', properties: { s: 'é'.repeat(8_190) } }, 'ws', NOW);
    expect(result).toMatchObject({ ok: false, errors: [{ pointer: '/properties', message: expect.stringMatching(/16384 bytes/) }] });
  });

  it('counts the properties object as depth 1 and stops at depth 8', () => {
    const deep = (levels: number): Record<string, unknown> => (levels === 1 ? { leaf: 1 } : { next: deep(levels - 1) });
    expect(checkEvent({ event_key: 'k', unit_id: 'u', properties: deep(EVENT_LIMITS.propertiesMaxDepth) }, 'ws', NOW).ok).toBe(true);
    expect(checkEvent({ event_key: 'k', unit_id: 'u', properties: deep(EVENT_LIMITS.propertiesMaxDepth + 1) }, 'ws', NOW).ok).toBe(false);
    // Arrays nest too.
    expect(checkEvent({ event_key: 'k', unit_id: 'u', properties: { a: [[[[[[[[1]]]]]]]] } }, 'ws', NOW).ok).toBe(false);
  });

  it('validates events of unknown shape against the same schema as the single-event route', () => {
    const result = validateEvent({ event_key: 'Bad Key', unit_id: '', extra: 1 }, 'ws', NOW);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const reason = describeRejection(result.errors, '/events/7');
    expect(
      reason
        .split('; ')
        .map((part) => part.split(':')[0])
        .sort(),
    ).toEqual(['/events/7/event_key', '/events/7/extra', '/events/7/unit_id']);
    expect(reason).toContain('/events/7/extra: is not a known field');
  });
});
