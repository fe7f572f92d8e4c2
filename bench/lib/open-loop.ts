/**
 * An open-loop load generator: requests leave at a fixed rate whether or not earlier ones were
 * answered (autocannon's closed loop sends the next request only after an answer, so a stalled
 * server is sent less and its stall hides in fewer, slower samples). Used by bench:soak.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Outcome {
  status: number;
  /** The body, only when the sender asked for it. */
  body?: string;
}

/** One HTTP target with keep-alive connections; enough of them that the client never queues. */
export class Target {
  readonly #agent: http.Agent;
  readonly #host: string;
  readonly #port: number;
  readonly #headers: Record<string, string>;

  constructor(url: string, headers: Record<string, string>, maxSockets = 256) {
    const parsed = new URL(url);
    this.#host = parsed.hostname;
    this.#port = Number(parsed.port);
    this.#headers = headers;
    // The agent's own timeout is what lets it honour the server's `Keep-Alive: timeout=72` hint:
    // Node shortens only a timeout it has, to a second before the server's. Without one, a
    // socket left idle in the pool after a burst was reused just as the server closed it, and
    // the request failed with ECONNRESET (22 of them in one window of an hour's soak).
    this.#agent = new http.Agent({ keepAlive: true, maxSockets, timeout: 120_000 });
  }

  request(method: string, path: string, body: string | null, readBody = false, timeoutMs = 30_000): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      const headers =
        body === null ? this.#headers : { ...this.#headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
      const request = http.request({ host: this.#host, port: this.#port, method, path, headers, agent: this.#agent }, (response) => {
        if (!readBody) {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      request.setTimeout(timeoutMs, () => request.destroy(new Error('timeout')));
      request.on('error', reject);
      request.end(body ?? undefined);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** A stream of requests sent at `perSecond`, each started by `send` (which records its own outcome). */
export interface Stream {
  name: string;
  perSecond: number;
  send(): void;
}

/**
 * Sends every stream at its rate from `start` until `stop()`: each tick sends what is due by
 * then, so a late tick (this process shares the cores with the server) sends its backlog at once
 * instead of lowering the rate. The largest gap between ticks is kept per window: a figure of
 * how late the generator itself was.
 */
export class OpenLoop {
  readonly #streams: Stream[];
  readonly #sent: number[];
  #timer: NodeJS.Timeout | null = null;
  #started = 0;
  #lastTick = 0;
  #maxGapMs = 0;

  constructor(streams: Stream[]) {
    this.#streams = streams;
    this.#sent = streams.map(() => 0);
  }

  start(): void {
    this.#started = performance.now();
    this.#lastTick = this.#started;
    this.#timer = setInterval(() => this.#tick(), 2);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** The largest gap between ticks since the last call, in ms. */
  takeMaxGapMs(): number {
    const gap = this.#maxGapMs;
    this.#maxGapMs = 0;
    return gap;
  }

  #tick(): void {
    const now = performance.now();
    this.#maxGapMs = Math.max(this.#maxGapMs, now - this.#lastTick);
    this.#lastTick = now;
    const elapsedSeconds = (now - this.#started) / 1000;
    this.#streams.forEach((stream, index) => {
      const due = Math.floor(elapsedSeconds * stream.perSecond);
      for (let sent = this.#sent[index] as number; sent < due; sent += 1) stream.send();
      this.#sent[index] = Math.max(this.#sent[index] as number, due);
    });
  }
}
