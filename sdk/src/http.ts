import { VerdictError } from './errors.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface SendOptions {
  keepalive?: boolean;
  signal?: AbortSignal;
}

export type Transport = (method: string, path: string, body: unknown, options?: SendOptions) => Promise<HttpResult>;

/** A body already encoded as JSON (the event queue encodes each batch once, before any retry). */
export class EncodedJson {
  constructor(readonly text: string) {}
}

/**
 * JSON over `fetch` with the API key. Any answer is returned, whatever its status; only a
 * request that got no answer throws (a `network` VerdictError).
 */
export function createTransport(baseUrl: string, apiKey: string, fetchImpl: FetchLike): Transport {
  const base = baseUrl.replace(/\/+$/, '');
  return async (method, path, body, options = {}) => {
    // Encoding fails (a cycle, a BigInt) before anything is sent: that is a TypeError, not a network error.
    const text = body === undefined ? null : body instanceof EncodedJson ? body.text : JSON.stringify(body);
    let response: Response;
    try {
      response = await fetchImpl(base + path, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
        body: text,
        ...(options.keepalive ? { keepalive: true } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      throw new VerdictError('network', `${method} ${path} got no answer: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    // Reading the body can fail too when the connection is cut mid-answer: that is no answer.
    let answer: string;
    try {
      answer = await response.text();
    } catch (error) {
      throw new VerdictError('network', `${method} ${path}: the answer was cut off`, { cause: error });
    }
    let parsed: unknown = answer;
    if (answer && /json/.test(response.headers.get('content-type') ?? '')) {
      try {
        parsed = JSON.parse(answer);
      } catch {
        parsed = answer;
      }
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}

/** 408, 429 and 5xx are worth repeating; other errors would fail the same way again. */
export function isRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** `Retry-After` as milliseconds, from delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Capped exponential backoff with jitter: attempt n waits between half and all of
 * min(max, base * 2^n), so clients that failed together do not retry together.
 */
export function backoffMs(attempt: number, { baseDelayMs, maxDelayMs }: BackoffOptions, random = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** Resolves after `ms`, or early (false) when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
