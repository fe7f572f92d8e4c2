import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid's default generator asks the OS for randomness once per character; reading it from a
// buffer refilled 4 KB at a time keeps the same source (the CSPRNG) at a fraction of the cost on
// the hot paths (request ids, assignments, events).
const pool = new Uint8Array(4096);
let offset = pool.length;

function bufferedRandom(): number {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return (pool[offset++] as number) / 256;
}

// Monotonic within a process, so ids created in the same millisecond still sort in creation
// order; cursor pagination orders by id.
const nextUlid = monotonicFactory(bufferedRandom);

export function newId(): string {
  return nextUlid();
}

export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
