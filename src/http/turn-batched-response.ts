import { ServerResponse, type IncomingMessage } from 'node:http';

type EndArguments = Parameters<ServerResponse['end']>;

/** Responses ended during this turn of the event loop, in the order they were ended. */
let ended: Array<{ response: TurnBatchedResponse; args: EndArguments }> = [];

function writeEnded(): void {
  const batch = ended;
  ended = [];
  for (const { response, args } of batch) response.endNow(args);
}

/**
 * The HTTP server's response (Node's `ServerResponse` option, set in app.ts): `end` is carried
 * out at the end of the current turn of the event loop (a `setImmediate`, which runs once the
 * turn's I/O callbacks are done and before the loop waits again), with the other responses ended
 * in that turn. Node holds a response's head until its first write, so a small response goes out
 * whole then. Redis does the same with its replies (`handleClientsWithPendingWrites`, run in
 * `beforeSleep`).
 *
 * Why: on a socket to a client on the same host (a load generator, a sidecar proxy, an app
 * server on the same node), the kernel delivers each write to the client within the write
 * itself, and wakes the client if it was asleep; on these 2-core VMs a wake-up cost 3-8 µs of
 * the server's CPU per response. Written one by one, each response found the client asleep
 * again; written together, the first wakes it and the rest find it busy. In the A/B of the
 * sticky hit in `docs/benchmarks.md`, CPU per request fell from 99.8 to 47.6 µs.
 *
 * What a turn adds to a response's latency is the rest of that turn's callbacks: nothing when
 * the server is idle, and under load less than the queueing it saves. A handler that computes
 * synchronously for long delays the responses ended before it in its turn (docs/benchmarks.md).
 */
export class TurnBatchedResponse extends ServerResponse<IncomingMessage> {
  #endRequested = false;

  static {
    // Fastify (and Node's own request timeout) read `writableEnded` as "the response was sent":
    // it is true from the moment `end` is called, as with an immediate end.
    Object.defineProperty(this.prototype, 'writableEnded', {
      get(this: TurnBatchedResponse) {
        return this.#endRequested || this.finished;
      },
    });
  }

  override end(...args: unknown[]): this {
    this.#endRequested = true;
    if (ended.length === 0) setImmediate(writeEnded);
    ended.push({ response: this, args: args as EndArguments });
    return this;
  }

  /** Node's own `end`, now. */
  endNow(args: EndArguments): void {
    (super.end as (...endArgs: unknown[]) => void)(...args);
  }
}
