import fs from 'node:fs';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { CENSOR, redactUrl } from './lib/redact-url.js';
import { LogSink } from './log-sink.js';

/** Paths that may carry credentials; pino replaces them before a line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature"]',
  'req.headers["x-service-signature"]',
  'headers.authorization',
  'key',
  'secret',
  'webhook_secret',
  'inbound_secret',
];

/** What Fastify logs of a request (its own serializer's fields), with the URL redacted. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

function serializeRequest(request: LoggedRequest) {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

let timestampMs = Number.NaN;
let timestampField = '';

/**
 * pino's `isoTime`, built once per millisecond: under load a dozen lines share one, and
 * formatting the date cost more than a microsecond of every access line.
 */
export function isoTimeOfThisMillisecond(): string {
  const now = Date.now();
  if (now !== timestampMs) {
    timestampMs = now;
    timestampField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timestampField;
}

/** Fields on every line of the service's log. */
const BASE = { service: 'verdict' };
/** The base fields as pino writes them after the time: `,"service":"verdict"`. */
const BASE_JSON = `,${JSON.stringify(BASE).slice(1, -1)}`;
const INFO = pino.levels.values.info;

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: BASE,
    timestamp: isoTimeOfThisMillisecond,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
    serializers: { req: serializeRequest },
  };
}

/**
 * Has V8 turn a line built by concatenation (a rope of a few dozen pieces) into one flat
 * string now, while its pieces are still in the CPU's cache: copied out 20 ms later, after
 * hundreds of other requests, every piece was a cache miss (about 1.2 µs per access line in a
 * perf profile of the no-op route). Converting a string to a number flattens it first.
 */
function flatten(line: string): void {
  Number(line);
}

/** The longest a line waits before it is handed to the sink. */
export const HANDOVER_DELAY_MS = 20;
/** Lines handed over at once when this many characters are pending before the delay is up: bounds what waits. */
const HANDOVER_CHARACTERS = 64 * 1024;

/** Where BatchedDestination hands its lines: a LogSink (log-sink.ts). */
export interface LineSink {
  write(text: string): void;
  /** Writes what is queued, waiting a bounded time for a slow reader. */
  flushSync(): void;
}

/**
 * What the service's logger writes to: the lines of 20 ms (sooner when 64 K characters are
 * pending) handed to the sink at once, as one string, so the log costs one write(2) per handover
 * instead of one per line. The pending lines are written when the process exits, after an
 * uncaught exception too, within the sink's bounded wait (a reader that is gone or stalled
 * cannot hold the exit); only a SIGKILL loses the last 20 ms.
 */
export class BatchedDestination {
  #pending: string[] = [];
  #pendingCharacters = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly sink: LineSink) {
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    flatten(line);
    this.#pending.push(line);
    this.#pendingCharacters += line.length;
    if (this.#pendingCharacters >= HANDOVER_CHARACTERS) this.#handOver();
    // Unreferenced: a pending line never keeps the process alive; the exit handler writes it.
    else this.#timer ??= setTimeout(() => this.#handOver(), HANDOVER_DELAY_MS).unref();
    return true;
  }

  /** pino's `logger.flush()`: hands over what is pending; the sink writes what the reader takes now. */
  flush(callback?: (error?: Error) => void): void {
    this.#handOver();
    callback?.();
  }

  /** Hands over what is pending and has the sink write it, waiting a bounded time for the reader. */
  flushSync(): void {
    this.#handOver();
    this.sink.flushSync();
  }

  #handOver(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pending.length === 0) return;
    const lines = this.#pending.join('');
    this.#pending = [];
    this.#pendingCharacters = 0;
    this.sink.write(lines);
  }
}

/**
 * Makes a pipe or socket on `fd` non-blocking, as Node does when `process.stdout` is first used
 * (libuv opens it so), so that LogSink's writes never wait on the reader. A file or a terminal
 * is left as it is: writing to those does not wait on a reader.
 */
function writeWithoutBlocking(fd: 1 | 2): void {
  const stat = fs.fstatSync(fd);
  if (stat.isFIFO() || stat.isSocket()) void (fd === 1 ? process.stdout : process.stderr);
}

/**
 * The service's logger. Lines go to stdout 20 ms of them at a time (BatchedDestination), without
 * a request ever waiting on the pipe (LogSink); what is pending is written when the process
 * exits, also after an uncaught exception, with a bounded wait for a slow reader. Only a
 * SIGKILL can lose the last lines.
 */
export function createLogger(level: string): Logger {
  writeWithoutBlocking(1);
  return loggerWritingTo(level, new BatchedDestination(new LogSink(1)));
}

/**
 * Writes one `info` line of plain JSON fields (no serializers run, nothing is redacted) as pino
 * would; the caller checks that `info` is enabled.
 */
export type InfoLineWriter = (fields: object) => void;

/** Per logger: its plain info line writer, or null once it is known to have none. */
const infoLineWriters = new WeakMap<Logger, InfoLineWriter | null>();

/**
 * The service's logger on `destination`, with a writer of its own for `info` lines of plain
 * values (the access line, one per request). pino serialises a line's object key by key,
 * checking serializers and redaction paths on each, and concatenates the pieces; one
 * `JSON.stringify` writes the same bytes (`src/logger.test.ts` compares them with pino's).
 * In perf profiles of a running server's no-op route, the access line went from 7.6-7.8% of
 * the CPU to 6.3%. (Writing each value by hand, with a check for what needs escaping, cost more.)
 */
export function loggerWritingTo(level: string, destination: { write(line: string): unknown }): Logger {
  const logger = pino(loggerOptions(level), destination);
  infoLineWriters.set(logger, (fields) => {
    // pino's order: level, time, the base bindings, then the line's own fields, msg last.
    const json = JSON.stringify(fields);
    destination.write(`{"level":${INFO}${isoTimeOfThisMillisecond()}${BASE_JSON}${json === '{}' ? '}' : `,${json.slice(1)}`}\n`);
  });
  return logger;
}

/**
 * The plain `info` line writer of a logger made by `loggerWritingTo`, or of a child of one that
 * adds no bindings (Fastify wraps the logger it is given in such a child, to add its
 * serializers); undefined for any other logger.
 */
export function infoLineWriterOf(logger: Logger): InfoLineWriter | undefined {
  let writer = infoLineWriters.get(logger);
  if (writer === undefined) {
    // pino makes a child with Object.create(parent).
    const parent = Object.getPrototypeOf(logger) as Logger | null;
    const inherited = parent ? infoLineWriterOf(parent) : undefined;
    writer = inherited && parent && sameBindings(logger, parent) ? inherited : null;
    infoLineWriters.set(logger, writer);
  }
  return writer ?? undefined;
}

function sameBindings(logger: Logger, parent: Logger): boolean {
  return JSON.stringify(logger.bindings()) === JSON.stringify(parent.bindings());
}

/** For one-shot commands whose stdout is their result (JSON to pipe on): logs go to stderr. */
export function createCommandLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination(2));
}

export type { Logger };
