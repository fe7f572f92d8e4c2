/**
 * Value parsing shared by validation and evaluation, so a value that validates is read the same
 * way when it is evaluated.
 */
import { RE2JS } from 're2js';
import semver from 'semver';

import type { AudienceScalar } from './audience-types.js';

export function isScalar(value: unknown): value is AudienceScalar {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/**
 * Walks a dot path through own properties only: `__proto__`, `constructor` and friends must not
 * resolve to something on Object.prototype. Numeric segments index arrays.
 */
export function readAttribute(context: Record<string, unknown>, path: string): unknown {
  let current: unknown = context;
  for (const segment of path.split('.')) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) {
        return undefined;
      }
      current = current[Number(segment)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

const DECIMAL_NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Numbers, or strings written as decimal numbers ("42", "-3.5"). Strings are accepted because
 * GrowthBook compares with JS `<` (which coerces) and Unleash parses its string contexts for
 * NUM_* operators; users of both expect `"30" gte 18` to hold. Hex, blanks and "" are rejected
 * where JS `Number()` would accept them.
 */
export function toComparableNumber(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) ? value : undefined;
  }
  if (typeof value === 'string' && DECIMAL_NUMBER.test(value)) {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

function offsetMinutes(zone: string): number | undefined {
  if (zone === 'Z') {
    return 0;
  }
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) {
    return undefined;
  }
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Epoch milliseconds of an ISO 8601 date (`2024-05-01`, midnight UTC) or date-time with `Z` or an
 * offset. Date-times without a zone are rejected: `Date.parse` would read them in the server's
 * local zone and the same rule would target differently per host. Impossible dates
 * (`2024-02-30`) are rejected where `Date.parse` would roll them over.
 */
export function parseIsoInstant(value: unknown): number | undefined {
  if (typeof value !== 'string') {
    return undefined;
  }
  const match = ISO_INSTANT.exec(value);
  if (match === null) {
    return undefined;
  }
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo) - 1;
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  const offset = offsetMinutes(zone);
  if (hour > 23 || minute > 59 || second > 59 || offset === undefined) {
    return undefined;
  }
  // setUTCFullYear instead of Date.UTC, which maps years 0..99 to 1900..1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month || date.getUTCDate() !== day) {
    return undefined;
  }
  date.setUTCHours(hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  return date.getTime() - offset * 60_000;
}

/** Normalised semver (leading `v` and surrounding blanks allowed, as `semver.valid` does) or null. */
export function validSemver(value: unknown): string | null {
  return typeof value === 'string' ? semver.valid(value) : null;
}

const REGEX_CACHE_SIZE = 256;
const regexCache = new Map<string, RE2JS | null>();

/**
 * Compiled pattern, or null when it does not compile. Cached because the same few audience
 * patterns are evaluated on every assign; insertion-order eviction keeps memory bounded.
 */
export function compileRegex(pattern: string): RE2JS | null {
  const cached = regexCache.get(pattern);
  if (cached !== undefined) {
    return cached;
  }
  let compiled: RE2JS | null;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    compiled = null;
  }
  if (regexCache.size >= REGEX_CACHE_SIZE) {
    const oldest = regexCache.keys().next();
    if (oldest.done !== true) {
      regexCache.delete(oldest.value);
    }
  }
  regexCache.set(pattern, compiled);
  return compiled;
}

/** The engine's reason a pattern does not compile, or undefined when it does. */
export function regexCompileError(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
