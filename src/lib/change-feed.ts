/** What changed, so caches can drop what they hold about it. */
export type Change =
  | { topic: 'api_key'; workspaceId: string; id: string }
  | { topic: 'experiment'; workspaceId: string; id: string; keys: string[] }
  | { topic: 'segment'; workspaceId: string }
  /** A holdout started, ended, grew or an experiment opted out: which experiments it covers may have changed. */
  | { topic: 'holdout'; workspaceId: string }
  | { topic: 'assignment'; workspaceId: string; experimentId: string; unitId: string };

export type ChangeListener = (change: Change) => void;

/**
 * Announces committed changes to the caches of this process. Publish after the transaction
 * commits; a cross-process transport (Redis pub/sub in scaled mode) can relay the same
 * messages to other processes, whose caches otherwise expire within their TTL.
 */
export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();
  #relay: ((change: Change) => void) | null = null;

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Sends a change to the local caches and, when connected, to the other processes. */
  publish(change: Change): void {
    this.deliver(change);
    this.#relay?.(change);
  }

  /** Delivers a change that arrived from another process (not relayed again). */
  deliver(change: Change): void {
    for (const listener of this.#listeners) listener(change);
  }

  connectRelay(relay: ((change: Change) => void) | null): void {
    this.#relay = relay;
  }
}
