import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

// scrypt with N = 2^15, r = 8, p = 1 (32 MiB and ~50-100 ms per hash on a server core): the
// interactive-login parameters RFC 7914 §2 and OWASP's Password Storage Cheat Sheet name. The
// parameters are stored with each hash, so raising them later leaves old hashes verifiable.
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
// N·r·128 bytes, with room: Node refuses parameters that need more than maxmem.
const MAX_MEMORY = 64 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const hash = await scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...PARAMS, maxmem: MAX_MEMORY });
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Compares in constant time; false for a malformed stored hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password.normalize('NFC'), Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAX_MEMORY,
  });
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
}

// A hash to verify against when the account does not exist, so an unknown address costs the
// same time as a wrong password and the answer's timing does not tell which addresses have accounts.
let decoy: Promise<string> | null = null;
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  await verifyPassword(password, await decoy);
  return false;
}
