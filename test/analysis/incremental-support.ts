import { expect } from 'vitest';
import type { TestServer } from '../support/server.js';

/** Seeded PRNG (mulberry32): the same seed drives the same stream. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function computeIn(server: TestServer, key: string, experimentId: string, mode: 'incremental' | 'full'): Promise<any> {
  const response = await server.request('POST', `/v1/experiments/${experimentId}/results/compute?mode=${mode}`, { key });
  expect(response.status, response.text).toBe(201);
  expect(response.body.computation.mode).toBe(mode);
  return response.body;
}

/** The fields of a snapshot that describe the data, not the computation. */
function comparable(snapshot: any): any {
  const { id: _id, computed_at: _at, trigger: _trigger, computation: _computation, planning, ...rest } = snapshot;
  if (!planning) return rest;
  // The days elapsed, and the traffic and days derived from them, follow the clock of the computation.
  const { days_elapsed: _days, daily_units: _daily, days_remaining: _remaining, expected_days_to_mde: _expected, ...sampleOnly } = planning;
  return { ...rest, planning: sampleOnly };
}

/**
 * Asserts two snapshots are the same analysis: every integer equal, every other number within
 * 1e-9 relative (1e-12 absolute for numbers at 0), everything else identical. Returns the
 * differences found (the assertion message names each path).
 */
export function expectSameAnalysis(actual: any, expected: any, what: string): void {
  const differences: string[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (typeof a === 'number' && typeof b === 'number') {
      if (Number.isInteger(a) && Number.isInteger(b)) {
        if (a !== b) differences.push(`${path}: ${a} vs ${b}`);
      } else if (Math.abs(a - b) > 1e-9 * Math.max(Math.abs(a), Math.abs(b)) + 1e-12) differences.push(`${path}: ${a} vs ${b}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) differences.push(`${path}: length ${a.length} vs ${b.length}`);
      else a.forEach((item, index) => walk(item, b[index], `${path}[${index}]`));
      return;
    }
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of keys) walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
      return;
    }
    if (a !== b) differences.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  };
  walk(comparable(actual), comparable(expected), 'snapshot');
  expect(differences, what).toEqual([]);
}
