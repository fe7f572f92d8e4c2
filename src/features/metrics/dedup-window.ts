/**
 * `unit_dedup_window`: how long after a unit's first exposure its events still count for a
 * metric. An ISO 8601 duration restricted to units of fixed length, because the analysis turns it
 * into milliseconds once and does plain arithmetic on epoch instants.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export const DEFAULT_DEDUP_WINDOW = 'P7D';
export const MIN_DEDUP_WINDOW_MS = SECOND;
export const MAX_DEDUP_WINDOW_MS = 365 * DAY;

const EXAMPLES = 'e.g. P7D, PT12H, P1DT2H30M or P2W';
const NUMBER = '(\\d+(?:[.,]\\d+)?)';
// Years and months are matched only so that they can be refused with a helpful message.
const DURATION = new RegExp(`^P(?:${NUMBER}Y)?(?:${NUMBER}M)?(?:${NUMBER}W)?(?:${NUMBER}D)?(?:T(?:${NUMBER}H)?(?:${NUMBER}M)?(?:${NUMBER}S)?)?$`);

/** Milliseconds per captured group of DURATION, in order; null marks the variable-length units. */
const GROUP_UNITS: readonly (number | null)[] = [null, null, WEEK, DAY, HOUR, MINUTE, SECOND];

export type DedupWindowResult = { ok: true; ms: number } | { ok: false; message: string };

function failure(message: string): DedupWindowResult {
  return { ok: false, message };
}

/**
 * Parses a window such as `P7D`, `PT12H`, `P1DT2H30M` or `P2W` into milliseconds. A day is
 * exactly 24 hours: the window is measured between UTC instants, so there is no daylight saving.
 * Weeks may be combined with other units (ISO 8601-2, as Temporal.Duration accepts). Only the
 * smallest unit given may carry a decimal fraction, as ISO 8601 says.
 */
export function parseDedupWindow(text: string): DedupWindowResult {
  if (text.startsWith('-')) return failure('must not be negative: the window runs forward from the first exposure');
  if (!text.startsWith('P')) {
    if (/^p/.test(text)) return failure(`use upper-case designators (${text.toUpperCase()})`);
    return failure(`must be an ISO 8601 duration starting with P, ${EXAMPLES}`);
  }
  if (/[a-z]/.test(text)) return failure(`use upper-case designators (${text.toUpperCase()})`);
  const match = DURATION.exec(text);
  if (!match) {
    return failure(`is not an ISO 8601 duration (${EXAMPLES}); hours, minutes and seconds go after the T`);
  }
  const groups = match.slice(1);
  const given = groups.flatMap((value, index) => (value === undefined ? [] : [index]));
  if (given.length === 0) return failure(`names no length; ${EXAMPLES}`);
  if (text.endsWith('T')) return failure('a T must be followed by hours, minutes or seconds (P1DT12H)');
  if (groups[0] !== undefined || groups[1] !== undefined) {
    return failure('years and months have no fixed length; give the window in weeks, days, hours, minutes or seconds (P30D rather than P1M)');
  }
  const last = given[given.length - 1];
  if (given.some((index) => index !== last && /[.,]/.test(groups[index] ?? ''))) {
    return failure('only the smallest unit given may have a fraction: P1DT1.5H, not P1.5DT1H');
  }
  const ms = Math.round(given.reduce((sum, index) => sum + parseDecimal(groups[index] ?? '0') * (GROUP_UNITS[index] ?? 0), 0));
  if (ms === 0) return failure('must be longer than zero');
  if (ms < MIN_DEDUP_WINDOW_MS) return failure('must be at least PT1S');
  if (ms > MAX_DEDUP_WINDOW_MS) return failure('must be at most P365D');
  return { ok: true, ms };
}

function parseDecimal(text: string): number {
  return Number(text.replace(',', '.'));
}
