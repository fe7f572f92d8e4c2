// The incremental refresh's cases (incremental-support.ts), run in order on one experiment by the
// PostgreSQL and the ClickHouse (chdb) tests.
import { expect, it } from 'vitest';
import { DAY, HOUR } from '../analysis/support.js';
import { assign, countedRows, expectSameResults, firstRows, full, incremental, rowsRead, T0, type FactRow, type Scenario } from './incremental-support.js';

const iso = (at: number) => new Date(at).toISOString();
const TIMEOUT = 240_000;

export function incrementalCases(scenario: () => Scenario): void {
  const first = Array.from({ length: 40 }, (_, i) => `a-${i}`);
  const later = Array.from({ length: 10 }, (_, i) => `b-${i}`);
  const exposedAt = new Map(first.map((unit) => [unit, T0]));
  const rows: FactRow[] = [];
  const insert = async (added: FactRow[]) => {
    await scenario().insert(added);
    rows.push(...added);
  };

  it(
    'reads every row on the first refresh, and a full refresh gives the same results',
    async () => {
      const { server, clock, boot } = scenario();
      clock.set(T0);
      await assign(server, boot, first);
      await insert(firstRows(first));
      clock.set(T0 + 8 * DAY);
      const first_ = await incremental(scenario());
      expect(first_.computation.warehouse).toEqual({
        mode: 'incremental',
        rows_read: rowsRead(rows, exposedAt, null),
        units_read_in_full: 40,
        units_read_from_cutoff: 0,
        read_from: null,
        settled_before: iso(T0 + 6 * DAY),
      });
      const fromScratch = await full(scenario());
      expect(fromScratch.computation.warehouse).toMatchObject({ mode: 'full', rows_read: first_.computation.warehouse.rows_read, units_read_in_full: 40 });
      expect(fromScratch.primary_metric.cuped).not.toBeNull();
      expect(fromScratch.secondary_metrics[0].cap_applied).toBeGreaterThan(0);
      expectSameResults(first_, fromScratch);
    },
    TIMEOUT,
  );

  it(
    'counts late rows inside the restatement window and reads new units in full, reading only from the cutoff: the same as a full refresh',
    async () => {
      const { server, clock, boot } = scenario();
      const before = countedRows(await full(scenario()));
      // The last refresh (T0 + 8 days) keeps rows before T0 + 6 days: these arrive late, after it.
      const late = [
        { unit_id: 'a-1', at: T0 + 7 * DAY, amount: 5 },
        { unit_id: 'a-2', at: T0 + 6 * DAY + 12 * HOUR, amount: null },
        { unit_id: 'a-3', at: T0 + 7 * DAY + 22 * HOUR, amount: 12 },
        { unit_id: 'a-4', at: T0 + 8 * DAY + 12 * HOUR, amount: 7 },
      ];
      await insert(late);
      clock.set(T0 + 9 * DAY);
      await assign(server, boot, later);
      for (const unit of later) exposedAt.set(unit, T0 + 9 * DAY);
      // Their lookback rows are older than the cutoff: counted only because new units are read in full.
      const history = later.flatMap((unit, i) => [
        { unit_id: unit, at: T0 + 5 * DAY, amount: 9 },
        { unit_id: unit, at: T0 + 9 * DAY + HOUR, amount: 2 + i },
      ]);
      await insert(history);
      clock.set(T0 + 10 * DAY);
      const refreshed = await incremental(scenario());
      const expectedRead = rowsRead(rows, new Map(first.map((unit) => [unit, T0])), T0 + 6 * DAY) + rowsRead(history, exposedAt, null);
      expect(refreshed.computation.warehouse).toEqual({
        mode: 'incremental',
        rows_read: expectedRead,
        units_read_in_full: 10,
        units_read_from_cutoff: 40,
        read_from: iso(T0 + 6 * DAY),
        settled_before: iso(T0 + 8 * DAY),
      });
      expect(countedRows(refreshed)).toBe(before + late.length + later.length);
      expectSameResults(refreshed, await full(scenario()));
    },
    TIMEOUT,
  );

  it(
    'misses a row later than the restatement window until a full refresh',
    async () => {
      const { clock } = scenario();
      // The full refresh at T0 + 10 days keeps rows before T0 + 8 days.
      await insert([
        { unit_id: 'a-5', at: T0 + 3 * DAY, amount: 8 },
        { unit_id: 'a-6', at: T0 + 9 * DAY + 12 * HOUR, amount: 6 },
      ]);
      const before = countedRows(await incremental(scenario()));
      clock.set(T0 + 11 * DAY);
      const missed = await incremental(scenario());
      expect(missed.computation.warehouse).toMatchObject({ read_from: iso(T0 + 8 * DAY), rows_read: rowsRead(rows, exposedAt, T0 + 8 * DAY) });
      expect(countedRows(missed)).toBe(before);
      const fromScratch = await full(scenario());
      expect(countedRows(fromScratch)).toBe(before + 1);
      const after = await incremental(scenario());
      expect(countedRows(after)).toBe(before + 1);
      expectSameResults(after, fromScratch);
    },
    TIMEOUT,
  );

  it(
    'gives the same snapshot twice from the same rows',
    async () => {
      const once = await incremental(scenario());
      const twice = await incremental(scenario());
      expect(twice.computation.warehouse).toEqual(once.computation.warehouse);
      expect(twice.computation.warehouse.rows_read).toBe(rowsRead(rows, exposedAt, T0 + 9 * DAY));
      expectSameResults(twice, once);
    },
    TIMEOUT,
  );
}
