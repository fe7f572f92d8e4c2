import { monotonicFactory } from 'ulid';

// Monotonic within a process, so ids created in the same millisecond still sort in creation
// order; cursor pagination orders by id.
const nextUlid = monotonicFactory();

export function newId(): string {
  return nextUlid();
}

export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
