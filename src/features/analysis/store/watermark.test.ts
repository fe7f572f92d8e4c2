import { describe, expect, it } from 'vitest';
import { capEvents, type Watermark } from './watermark.js';

const mark = (rowid: number) => ({ rowid, id: `e${rowid}` });
const sqliteMark = (events: number | null, exposures = 7): Watermark => ({
  kind: 'sqlite',
  events: events === null ? null : mark(events),
  exposures: mark(exposures),
  superseded: 3,
});

describe('capEvents: where a SQLite refresh in rounds stops', () => {
  it('stops at the last event there was when the refresh began, keeping the exposures of now', () => {
    const current = sqliteMark(500, 9);
    expect(capEvents(current, sqliteMark(100), mark(300))).toEqual({ ...current, events: mark(300) });
  });

  it('takes what is there when no event arrived past the stop', () => {
    const current = sqliteMark(300);
    expect(capEvents(current, sqliteMark(100), mark(300))).toBe(current);
    expect(capEvents(sqliteMark(null), sqliteMark(null), mark(300))).toEqual(sqliteMark(null));
  });

  it('never goes back behind a watermark another refresh already stored past the stop', () => {
    expect(capEvents(sqliteMark(500), sqliteMark(400), mark(300))).toEqual({ ...sqliteMark(500), events: mark(400) });
  });

  it('leaves a PostgreSQL watermark and a refresh without a stop as they are', () => {
    const postgres: Watermark = { kind: 'postgres', snapshot: '10:12:' };
    expect(capEvents(postgres, postgres, mark(3))).toBe(postgres);
    const current = sqliteMark(500);
    expect(capEvents(current, sqliteMark(100), null)).toBe(current);
  });
});
