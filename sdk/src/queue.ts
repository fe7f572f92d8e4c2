/**
 * A first-in first-out queue with a bound: adding to a full queue drops the oldest item, so
 * tracking never blocks or grows memory without limit while the server cannot be reached.
 */
export class BoundedQueue<T> {
  #items: T[] = [];
  #head = 0;
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get length(): number {
    return this.#items.length - this.#head;
  }

  /** Adds an item; returns how many old items were dropped to make room (0 or 1). */
  push(item: T): number {
    let dropped = 0;
    if (this.length >= this.capacity) {
      this.#head += 1;
      dropped = 1;
    }
    this.#items.push(item);
    this.#compact();
    return dropped;
  }

  /** Puts items back at the front (a send that could not complete), within the bound. */
  unshift(items: T[]): number {
    const room = Math.max(0, this.capacity - this.length);
    const kept = items.slice(Math.max(0, items.length - room));
    this.#items = [...kept, ...this.#items.slice(this.#head)];
    this.#head = 0;
    return items.length - kept.length;
  }

  /** Removes and returns up to `count` of the oldest items. */
  take(count: number): T[] {
    const end = Math.min(this.#items.length, this.#head + count);
    const taken = this.#items.slice(this.#head, end);
    this.#head = end;
    this.#compact();
    return taken;
  }

  /** Drops the consumed prefix once it is the larger part, keeping push and take amortised O(1). */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
