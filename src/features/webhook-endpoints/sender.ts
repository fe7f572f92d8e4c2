// Sends one delivery attempt. No redirects are followed (node:http never follows them; a 3xx is a
// failure), the response body is read to 1 KB at most, the whole attempt has a deadline, and the
// address is checked where the connection is made: for a name, in the `lookup` the socket calls
// after DNS resolution (so a DNS answer cannot smuggle in a private address, and a second lookup
// cannot differ from a first check), and for an IP literal, before any socket is opened.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusedAddressReason } from './network-policy.js';

export const RESPONSE_BODY_LIMIT = 1024;

export interface SendOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export type SendResult =
  { ok: true; status: number; body: string; durationMs: number } | { ok: false; status: number | null; body: string | null; durationMs: number; error: string };

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/** A lookup that resolves as usual and refuses the connection when any answer is not public. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as dns.LookupAddress[];
      const blocked = allowPrivate ? undefined : list.find((entry) => refusedAddressReason(entry.address) !== null);
      if (blocked) {
        return callback(
          new RefusedAddressError(`refused: ${hostname} resolves to ${blocked.address}, a private, loopback, link-local or reserved address`),
          '',
          0,
        );
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`no address for ${hostname}`), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}

/** Why a URL cannot be sent to before any connection, or null. */
export function urlRefusal(url: URL, allowPrivate: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `refused: only http and https URLs are delivered to, not ${url.protocol}`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate || isIP(host) === 0) return null;
  const reason = refusedAddressReason(host);
  return reason ? `refused: ${reason}` : null;
}

function readLimited(response: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size >= RESPONSE_BODY_LIMIT) return;
      chunks.push(chunk);
      size += chunk.length;
      // Enough: stop reading; the rest of a large or endless body is never downloaded.
      if (size >= RESPONSE_BODY_LIMIT) response.destroy();
    });
    response.on('end', () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')));
    response.on('close', () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')));
    response.on('error', reject);
  });
}

/** One POST; never throws. A 2xx answered within the deadline is the only success. */
export async function sendDelivery(options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(options.url);
  const refusal = urlRefusal(url, options.allowPrivateNetworks);
  if (refusal) return { ok: false, status: null, body: null, durationMs: elapsed(), error: refusal };
  const transport = url.protocol === 'https:' ? https : http;
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = transport.request(
        url,
        {
          method: 'POST',
          headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
          lookup: guardedLookup(options.allowPrivateNetworks),
          signal,
          agent: false,
        },
        (response) => {
          readLimited(response)
            .then((text) => resolve({ status: response.statusCode ?? 0, body: text }))
            .catch(reject);
        },
      );
      request.on('error', reject);
      request.end(options.body);
    });
    if (status >= 200 && status < 300) return { ok: true, status, body, durationMs: elapsed() };
    const why = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`;
    return { ok: false, status, body, durationMs: elapsed(), error: why };
  } catch (error) {
    return { ok: false, status: null, body: null, durationMs: elapsed(), error: describeFailure(error, signal, options.timeoutMs) };
  }
}

function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`;
  if (error instanceof RefusedAddressError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message;
}
