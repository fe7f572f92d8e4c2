import type { Worker } from 'node:cluster';
import type { Change, ChangeFeed } from './change-feed.js';

/** A change on its way between the HTTP processes of one `verdict serve --processes N`. */
interface ChangeMessage {
  verdict: 'change';
  change: Change;
}

function isChangeMessage(message: unknown): message is ChangeMessage {
  return typeof message === 'object' && message !== null && (message as { verdict?: unknown }).verdict === 'change';
}

/**
 * Worker side: sends this process's committed changes to the primary and delivers the ones
 * the primary forwards from its siblings. Node's IPC channel is ordered and lossless while the
 * processes live, so without Redis the siblings' caches still hear of a change at once.
 */
export function joinClusterRelay(feed: ChangeFeed, send: (message: ChangeMessage) => void, onMessage: (listener: (message: unknown) => void) => void): void {
  feed.connectRelay((change) => send({ verdict: 'change', change }));
  onMessage((message) => {
    if (isChangeMessage(message)) feed.deliver(message.change);
  });
}

/** Primary side: forwards each worker's change to every other worker. */
export function forwardChanges(from: Worker, workers: () => Iterable<Worker>): void {
  from.on('message', (message: unknown) => {
    if (!isChangeMessage(message)) return;
    for (const worker of workers()) {
      if (worker !== from && worker.isConnected()) worker.send(message);
    }
  });
}
