import type { Executor } from '../../db/database.js';
import { problems } from '../../http/problems.js';
import { sha256Hex } from '../../lib/secrets.js';

// Failed sign-ins are counted per account *and address* (so guessing one person's password from
// one place stops there, while the person, signing in from anywhere else, is never locked out by
// someone else's guesses), and per address over every account (so one address spraying a common
// password over many accounts stops too). Both counts live in the database, so every process of a
// cluster sees them. The figures follow OWASP's Authentication Cheat Sheet ("Login Throttling").
export const WINDOW_MS = 15 * 60 * 1000;
export const ACCOUNT_ADDRESS_LIMIT = 5;
export const ADDRESS_LIMIT = 30;

export interface ThrottleKeys {
  accountAtAddress: string;
  address: string;
}

/** Keys name a hash of the address, never the address itself. */
export function throttleKeys(email: string, ip: string): ThrottleKeys {
  return { accountAtAddress: `account:${sha256Hex(`${email}\n${ip}`)}`, address: `address:${sha256Hex(ip)}` };
}

async function failuresOf(executor: Executor, key: string, now: number): Promise<{ failures: number; retryAfterMs: number }> {
  const row = await executor.selectFrom('sign_in_failures').selectAll().where('throttle_key', '=', key).executeTakeFirst();
  if (!row || row.window_started_at + WINDOW_MS <= now) return { failures: 0, retryAfterMs: 0 };
  return { failures: row.failures, retryAfterMs: row.window_started_at + WINDOW_MS - now };
}

/** Throws 429 (before any password is checked) when either count is spent. */
export async function refuseWhenThrottled(executor: Executor, keys: ThrottleKeys, now: number): Promise<void> {
  for (const [key, limit] of [
    [keys.accountAtAddress, ACCOUNT_ADDRESS_LIMIT],
    [keys.address, ADDRESS_LIMIT],
  ] as const) {
    const { failures, retryAfterMs } = await failuresOf(executor, key, now);
    if (failures >= limit) {
      throw problems.tooManyRequests('too many failed sign-ins from this address; wait before trying again', Math.ceil(retryAfterMs / 1000));
    }
  }
}

export async function recordFailure(executor: Executor, keys: ThrottleKeys, now: number): Promise<void> {
  for (const key of [keys.accountAtAddress, keys.address]) {
    const { failures } = await failuresOf(executor, key, now);
    const windowStart = failures === 0 ? now : undefined;
    await executor
      .insertInto('sign_in_failures')
      .values({ throttle_key: key, failures: 1, window_started_at: now })
      .onConflict((oc) =>
        oc.column('throttle_key').doUpdateSet(windowStart === undefined ? { failures: failures + 1 } : { failures: 1, window_started_at: windowStart }),
      )
      .execute();
  }
}

/** A successful sign-in clears its account's count at that address (not the address's own). */
export async function clearFailures(executor: Executor, keys: ThrottleKeys): Promise<void> {
  await executor.deleteFrom('sign_in_failures').where('throttle_key', '=', keys.accountAtAddress).execute();
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/**
 * The address a sign-in is counted under. Behind a reverse proxy on the same host (deploy/nginx.conf,
 * deploy/Caddyfile) every request comes from loopback, which would put everyone under one count; so
 * for a loopback peer the right-most X-Forwarded-For entry (the one that proxy appended: the address
 * it saw) is used. A peer elsewhere cannot choose its address this way.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined): string {
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  if (!header || !LOOPBACK.test(peer)) return peer;
  const last = header
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .at(-1);
  return last && last.length <= 64 ? last : peer;
}
