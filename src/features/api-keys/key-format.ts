import type { KeyKind } from '../../http/principal.js';
import { randomBase62, sha256Hex } from '../../lib/secrets.js';

export type { KeyKind } from '../../http/principal.js';

const KIND_CODES: Record<KeyKind, string> = { server: 'srv', client: 'clt' };
const KEY_PATTERN = /^vd_(srv|clt)_([a-z0-9-]{1,32})_([0-9A-Za-z]{43,})$/;

/** Written into an unbound key where an environment slug would go. */
export const UNBOUND_ENVIRONMENT = 'all';

export interface IssuedKey {
  key: string;
  prefix: string;
  lastFour: string;
  hash: string;
}

/** `vd_{srv|clt}_{env}_{secret}` with 32 random bytes of base62 secret; only the hash is stored. */
export function issueKey(kind: KeyKind, environmentSlug: string | null): IssuedKey {
  const prefix = `vd_${KIND_CODES[kind]}_${environmentSlug ?? UNBOUND_ENVIRONMENT}`;
  const key = `${prefix}_${randomBase62(32)}`;
  return { key, prefix, lastFour: key.slice(-4), hash: hashKey(key) };
}

export function hashKey(key: string): string {
  return sha256Hex(key);
}

export interface ParsedKey {
  kind: KeyKind;
  environmentSlug: string;
}

/** Shape check only; whether the key exists is the database's answer. */
export function parseKey(key: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  return { kind: match[1] === 'srv' ? 'server' : 'client', environmentSlug: match[2] as string };
}
