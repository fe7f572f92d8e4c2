import { describe, expect, it } from 'vitest';
import { chooseVariant } from '../assignment/bucketing.js';
import { hashBucketV2 } from '../assignment/hashing.js';
import { contactBuckets, expectedShares, heldOutBuckets, holdingOut, isHeldOut, sampleBuckets } from './membership.js';

const units = Array.from({ length: 20_000 }, (_, i) => `unit-${i}`);

describe('holdout membership', () => {
  it('holds out exactly the units whose salted bucket is below percent × 100', () => {
    const rule = { salt: 'a1b2c3', percent: 2.5 };
    expect(heldOutBuckets(0.5)).toBe(50);
    expect(heldOutBuckets(20)).toBe(2000);
    for (const unit of units.slice(0, 2_000)) expect(isHeldOut(rule, unit)).toBe(hashBucketV2('a1b2c3', unit) < 250);
  });

  it('keeps every held-out unit held out when the percentage grows, and holds out about that share', () => {
    const small = new Set(units.filter((unit) => isHeldOut({ salt: 's', percent: 5 }, unit)));
    const large = new Set(units.filter((unit) => isHeldOut({ salt: 's', percent: 15 }, unit)));
    expect([...small].every((unit) => large.has(unit))).toBe(true);
    // Binomial(20,000, 0.05): sd about 31; 0.15: about 50. Five sd either side.
    expect(Math.abs(small.size - 1_000)).toBeLessThan(155);
    expect(Math.abs(large.size - 3_000)).toBeLessThan(250);
  });

  it('draws held-out units evenly from an experiment’s variants (the two hashes are independent)', () => {
    const variants = [
      { key: 'control', weight: 50 },
      { key: 'treatment', weight: 50 },
    ];
    const held = units.filter((unit) => isHeldOut({ salt: 'q3', percent: 20 }, unit));
    const treated = held.filter((unit) => chooseVariant('checkout', unit, variants).key === 'treatment').length;
    const expected = held.length / 2;
    // Chi-squared with one degree of freedom below 10.83 (p > 0.001; scipy.stats.chi2.ppf(0.999, 1)).
    const chiSquared = (2 * (treated - expected) ** 2) / expected;
    expect(chiSquared).toBeLessThan(10.83);
  });

  it('names the first holdout that holds a unit out, and different salts hold out different units', () => {
    const rules = [
      { id: 'first', salt: 'one', percent: 10 },
      { id: 'second', salt: 'two', percent: 10 },
    ];
    const byFirst = units.filter((unit) => isHeldOut(rules[0]!, unit));
    const bySecondOnly = units.filter((unit) => !isHeldOut(rules[0]!, unit) && isHeldOut(rules[1]!, unit));
    expect(byFirst.every((unit) => holdingOut(rules, unit)?.id === 'first')).toBe(true);
    expect(bySecondOnly.every((unit) => holdingOut(rules, unit)?.id === 'second')).toBe(true);
    expect(bySecondOnly.length).toBeGreaterThan(1_000);
    expect(holdingOut([], 'anyone')).toBeNull();
  });

  it('draws a comparison sample as large as the holdout from the units it does not hold out', () => {
    // s = round(h × 10,000 / (10,000 − h)): 20% -> 2,500 buckets of the other 80%.
    expect(sampleBuckets(20)).toBe(2500);
    expect(sampleBuckets(10)).toBe(1111);
    expect(sampleBuckets(0.5)).toBe(50);
    expect(expectedShares(20)).toEqual({ held_out: 0.2, sample: 0.2 });
    expect(expectedShares(10)).toEqual({ held_out: 0.1, sample: 0.09999 });
    const rule = { salt: 'held', sampleSalt: 'drawn', percent: 20 };
    const contacts = units.map((unit) => [unit, contactBuckets(rule, unit)] as const).filter(([, buckets]) => buckets !== null);
    const held = contacts.filter(([unit]) => isHeldOut(rule, unit)).length;
    const sampled = contacts.length - held;
    // Binomial(20,000, 0.2): sd about 57 each; five sd either side.
    expect(Math.abs(held - 4_000)).toBeLessThan(285);
    expect(Math.abs(sampled - 4_000)).toBeLessThan(285);
    // Everyone else has no contact to record.
    expect(units.filter((unit) => !isHeldOut(rule, unit) && hashBucketV2('drawn', unit) >= 2500).every((unit) => contactBuckets(rule, unit) === null)).toBe(
      true,
    );
  });
});
