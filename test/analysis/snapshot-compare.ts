import { expect } from 'vitest';

/**
 * Comparing the snapshots of two servers that computed the same data (one on SQL, one on
 * ClickHouse): every number within 1e-9 relative (integers exactly), every other value equal,
 * leaving out what differs by server alone (ids, times, the store).
 */

export function expectSameNumbers(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (Number.isInteger(expected) && Number.isInteger(actual)) return void expect(actual, path).toBe(expected);
    const scale = Math.max(Math.abs(expected), Math.abs(actual), 1e-300);
    expect(Math.abs(actual - expected) / scale, `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9);
    return;
  }
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual) && actual.length, path).toBe(expected.length);
    expected.forEach((item, index) => expectSameNumbers((actual as unknown[])[index], item, `${path}[${index}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [name, value] of Object.entries(expected)) expectSameNumbers((actual as Record<string, unknown>)[name], value, `${path}.${name}`);
    return;
  }
  expect(actual, path).toEqual(expected);
}

function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).flatMap(([name, item]) => (/^(id|experiment_id|metric_id)$/.test(name) ? [] : [[name, withoutIds(item)]])));
}

/** Slices with the source breakdown's values and labels left out (each server's own key ids). */
function withoutSources(breakdowns: any[] | undefined): any[] {
  return (breakdowns ?? []).map((breakdown: any) =>
    breakdown.dimension === 'source' ? { ...breakdown, values: breakdown.values.map(({ value: _v, label: _l, ...value }: any) => value) } : breakdown,
  );
}

/** What depends on the data alone: not the snapshot's ids, time, duration, store or source-key labels (each server's own keys). */
export function comparable(snapshot: any): unknown {
  const { computed_at: _at, computation, breakdowns, metric_breakdowns, ...rest } = withoutIds(snapshot) as any;
  const metricSlices =
    metric_breakdowns === undefined
      ? {}
      : { metric_breakdowns: metric_breakdowns.map((metric: any) => ({ ...metric, breakdowns: withoutSources(metric.breakdowns) })) };
  return { ...rest, breakdowns: withoutSources(breakdowns), ...metricSlices, computation: { mode: computation.mode, events_read: computation.events_read } };
}
