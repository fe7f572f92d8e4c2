/**
 * In-process notice that a workspace's segments changed, so caches of segment rules (the
 * assignment cache) can drop that workspace. It reaches listeners of this process only: other
 * processes in scaled mode must bound staleness themselves (a short TTL).
 */

export type SegmentsChangedListener = (workspaceId: string) => void;

const listeners = new Set<SegmentsChangedListener>();

/** Subscribes; the returned function unsubscribes. */
export function onSegmentsChanged(listener: SegmentsChangedListener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/**
 * Called after the change has committed. A failing listener must not turn a saved change into an
 * error response, nor keep later listeners from hearing about it, so errors are swallowed here.
 */
export function notifySegmentsChanged(workspaceId: string): void {
  for (const listener of listeners) {
    try {
      listener(workspaceId);
    } catch {
      // deliberately ignored: see above
    }
  }
}
