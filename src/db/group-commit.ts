interface Waiting<Item, Result> {
  item: Item;
  weight: number;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<Item, Result> {
  /** Writes every item of a group in one transaction and returns one result per item, in order. */
  commit(items: Item[]): Promise<Result[]>;
  /** Size of an item (events in a request), to bound a group. */
  weigh(item: Item): number;
  /** A group stops growing at this weight; one heavier item still forms a group on its own. */
  maxWeight: number;
  /**
   * Groups committing at once (default 1: the next group forms while one commits). More suits a
   * commit that only hands the group to a writer that queues them anyway (another thread), so
   * the writer never idles waiting for this thread to send the next group.
   */
  maxInFlight?: number;
}

/**
 * Group commit: items submitted while a commit is in flight wait and then go to the database
 * together, so one transaction (one fsync) serves many concurrent requests. Each submitter's
 * promise settles only after the commit that carried its item, never before.
 */
export class GroupCommit<Item, Result> {
  readonly #options: GroupCommitOptions<Item, Result>;
  readonly #maxInFlight: number;
  #queue: Waiting<Item, Result>[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #scheduled = false;

  constructor(options: GroupCommitOptions<Item, Result>) {
    this.#options = options;
    this.#maxInFlight = options.maxInFlight ?? 1;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#queue.push({ item, weight: this.#options.weigh(item), resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once everything submitted so far has been committed or failed. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0 || this.#queue.length > 0 || this.#scheduled) {
      const [first] = this.#inFlight;
      await (first ?? new Promise((resolve) => setImmediate(resolve)));
    }
  }

  #schedule(): void {
    if (this.#inFlight.size >= this.#maxInFlight || this.#scheduled) return;
    this.#scheduled = true;
    // Waiting one turn of the event loop lets requests parsed in the same tick join the group.
    setImmediate(() => {
      this.#scheduled = false;
      const flight: Promise<void> = this.#flush().finally(() => {
        this.#inFlight.delete(flight);
        if (this.#queue.length > 0) this.#schedule();
      });
      this.#inFlight.add(flight);
      // What did not fit in the group goes in the next one, now if another may be in flight.
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  #takeGroup(): Waiting<Item, Result>[] {
    let weight = 0;
    let count = 0;
    for (const waiting of this.#queue) {
      if (count > 0 && weight + waiting.weight > this.#options.maxWeight) break;
      weight += waiting.weight;
      count += 1;
    }
    return this.#queue.splice(0, count);
  }

  async #flush(): Promise<void> {
    const group = this.#takeGroup();
    if (group.length === 0) return;
    try {
      const results = await this.#options.commit(group.map((waiting) => waiting.item));
      group.forEach((waiting, index) => waiting.resolve(results[index] as Result));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    }
  }
}
