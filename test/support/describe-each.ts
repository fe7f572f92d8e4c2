import { describe } from 'vitest';
import { testDialects, type DialectName } from './databases.js';

export type BufferMode = 'embedded' | 'redis';

/** The shared Redis of the test run, when there is one. */
export function testRedisUrl(): string | null {
  return process.env.VERDICT_TEST_REDIS_URL || null;
}

/** One combination a suite runs on. `buffer` is 'embedded' when the suite does not vary it. */
export interface Variant {
  dialect: DialectName;
  buffer: BufferMode;
}

export interface Matrix {
  /** Default: both. */
  dialects?: DialectName[];
  /** Omitted: the suite does not vary the buffer (it runs embedded and its name does not say so). */
  buffers?: BufferMode[];
  /** Run the variants side by side (describe.concurrent), for slow suites that wait on processes. */
  concurrent?: boolean;
}

const ALL_DIALECTS: DialectName[] = ['sqlite', 'postgres'];

/** Why a variant cannot run in this test run, or null when it can. */
function unavailable(variant: Variant): string | null {
  if (variant.dialect === 'postgres' && !testDialects().includes('postgres')) return 'VERDICT_TEST_DATABASE_URL is not set';
  if (variant.buffer === 'redis' && !testRedisUrl()) return 'VERDICT_TEST_REDIS_URL is not set';
  return null;
}

const warned = new Set<string>();
function warnOnce(reason: string): void {
  if (warned.has(reason)) return;
  warned.add(reason);
  console.warn(`[verdict] ${reason}: the variants that need it are skipped.`);
}

/**
 * Runs the same suite once per database (and, when asked, per event buffer), named
 * "<name> [sqlite]" or "<name> [sqlite, redis]". A variant whose service the run was not given
 * (VERDICT_TEST_DATABASE_URL, VERDICT_TEST_REDIS_URL) is skipped, with the reason in its name and
 * a warning; one whose variable is set but whose service is down fails, it is never skipped, and
 * CI (.ci/run) sets both variables and checks both services first (scripts/check-services.ts).
 */
export function describeEach(name: string, matrix: Matrix, suite: (variant: Variant) => void): void {
  for (const dialect of matrix.dialects ?? ALL_DIALECTS) {
    for (const buffer of matrix.buffers ?? [undefined]) {
      const variant: Variant = { dialect, buffer: buffer ?? 'embedded' };
      const label = `${name} [${buffer ? `${dialect}, ${buffer}` : dialect}]`;
      const reason = unavailable(variant);
      if (reason) {
        warnOnce(reason);
        describe.skip(`${label} (skipped: ${reason})`, () => suite(variant));
      } else if (matrix.concurrent) {
        describe.concurrent(label, () => suite(variant));
      } else {
        describe(label, () => suite(variant));
      }
    }
  }
}
