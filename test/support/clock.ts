import type { Clock } from '../../src/lib/time.js';

/** A clock the test moves by hand; starts at the real time unless told otherwise. */
export class ManualClock implements Clock {
  constructor(public current = Date.now()) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: number): void {
    this.current = at;
  }
}
