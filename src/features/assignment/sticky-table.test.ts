import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { StickyTable } from './sticky-table.js';
import type { CachedAssignment } from './store.js';

const REASONS = ['bucketed', 'mutex_holdout', 'audience_excluded'] as const;

function assignment(index: number): CachedAssignment {
  return {
    id: newId(),
    variant_key: index % 5 === 0 ? null : `variant-${index % 7}`,
    reason: REASONS[index % REASONS.length] as CachedAssignment['reason'],
    exposure_logged_at: index % 3 === 0 ? null : 1_700_000_000_000 + index,
  };
}

// A deterministic sequence, so a failure replays.
function randomFrom(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 48271) % 2147483647;
    return state % below;
  };
}

describe('the sticky table (the off-heap sticky cache)', () => {
  it('answers what was set, last write winning, across sets, overwrites and deletes of colliding probe runs', () => {
    // 600 keys (300 units in two experiments) in a table of 858 slots: long probe runs, so deletes must move entries back.
    const table = new StickyTable({ capacity: 600, ttlMs: 60_000 });
    const model = new Map<string, CachedAssignment>();
    const random = randomFrom(42);
    for (let step = 0; step < 30_000; step += 1) {
      const unit = `unit-${random(300)}`;
      const experiment = `exp-${random(2)}`;
      const key = `${experiment}/${unit}`;
      const roll = random(10);
      if (roll < 5) {
        const value = assignment(step);
        table.set(experiment, unit, value);
        model.set(key, value);
      } else if (roll < 7) {
        table.delete(experiment, unit);
        model.delete(key);
      } else {
        expect(table.get(experiment, unit)).toEqual(model.get(key));
      }
      if (model.size > 600) throw new Error('the model outgrew the capacity: the test would evict');
    }
    expect(table.size).toBe(model.size);
    for (const [key, value] of model) {
      const [experiment, unit] = key.split('/') as [string, string];
      expect(table.get(experiment, unit)).toEqual(value);
    }
  });

  it('keeps at most its capacity, and every answer it still gives is the right one', () => {
    const table = new StickyTable({ capacity: 1_000, ttlMs: 60_000 });
    const written = new Map<string, CachedAssignment>();
    for (let index = 0; index < 10_000; index += 1) {
      const value = assignment(index);
      table.set('exp', `unit-${index}`, value);
      written.set(`unit-${index}`, value);
      expect(table.size).toBeLessThanOrEqual(1_000);
    }
    expect(table.size).toBe(1_000);
    let held = 0;
    for (const [unit, value] of written) {
      const got = table.get('exp', unit);
      if (got === undefined) continue;
      held += 1;
      expect(got).toEqual(value);
    }
    expect(held).toBe(1_000);
  });

  it('evicts entries not read since the last sweep before those that were read (CLOCK)', () => {
    const table = new StickyTable({ capacity: 100, ttlMs: 60_000 });
    for (let index = 0; index < 100; index += 1) table.set('exp', `old-${index}`, assignment(index));
    // The 101st sweeps every flag clear and evicts one; then the first half is read, and 49 more
    // arrive: each eviction takes one of the unread half.
    table.set('exp', 'new-0', assignment(100));
    const read = [...Array(50).keys()].map((index) => `old-${index}`).filter((unit) => table.get('exp', unit) !== undefined);
    expect(read.length).toBeGreaterThanOrEqual(49);
    for (let index = 1; index < 50; index += 1) table.set('exp', `new-${index}`, assignment(100 + index));
    for (const unit of read) expect(table.get('exp', unit)).toBeDefined();
    expect(table.size).toBe(100);
  });

  it('stops answering an entry once it is ttlMs old', () => {
    let now = 1_000;
    const table = new StickyTable({ capacity: 10, ttlMs: 500, now: () => now });
    const value = assignment(1);
    table.set('exp', 'unit', value);
    now += 499;
    expect(table.get('exp', 'unit')).toEqual(value);
    now += 1;
    expect(table.get('exp', 'unit')).toBeUndefined();
    expect(table.size).toBe(0);
  });

  it('tells apart the same unit in two experiments, and an experiment id that ends where a unit id starts', () => {
    const table = new StickyTable({ capacity: 10, ttlMs: 60_000 });
    const [a, b, c] = [assignment(1), assignment(2), assignment(4)];
    table.set('exp-1', 'unit', a);
    table.set('exp-2', 'unit', b);
    table.set('exp-1u', 'nit', c);
    expect(table.get('exp-1', 'unit')).toEqual(a);
    expect(table.get('exp-2', 'unit')).toEqual(b);
    expect(table.get('exp-1u', 'nit')).toEqual(c);
  });

  it('does not keep an assignment whose id it cannot hold, and starts empty again rather than overflow its variant codes', () => {
    const table = new StickyTable({ capacity: 10, ttlMs: 60_000 });
    table.set('exp', 'long-id', assignment(2));
    table.set('exp', 'long-id', { ...assignment(1), id: 'an-id-of-twenty-eight-chars!' });
    expect(table.get('exp', 'long-id')).toBeUndefined(); // nor the entry it replaced
    table.set('exp', 'non-ascii-id', { ...assignment(1), id: 'ünïcode' });
    expect(table.get('exp', 'non-ascii-id')).toBeUndefined();
    const short = { ...assignment(1), id: '00SA00000000042' };
    table.set('exp', 'short-id', short);
    expect(table.get('exp', 'short-id')).toEqual(short);
    for (let index = 0; index <= 0xfffe; index += 1) table.set('exp', 'unit', { ...assignment(1), variant_key: `v${index}` });
    const last = { ...assignment(1), variant_key: 'one-too-many' };
    table.set('exp', 'unit', last);
    expect(table.get('exp', 'unit')).toEqual(last);
    expect(table.size).toBe(1);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new StickyTable({ capacity: 0, ttlMs: 1 })).toThrow(/positive integer/);
  });
});
