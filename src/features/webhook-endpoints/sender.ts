// Sends one delivery attempt. No redirects are followed (node:http never follows them; a 3xx is a
// failure), the response body is read to 1 KB at most, the whole attempt has a deadline, and the
// address is checked where the connection is made: for a name, in the `lookup` the socket calls
// after DNS resolution (so a DNS answer cannot smuggle in a private address, and a second lookup
// cannot differ from a first check), and for an IP literal, before any socket is opened.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parseUrl } from './endpoint-url.js';
import { isRefusedAddress, PRIVATE_ADDRESS } from './network-policy.js';

export const RESPONSE_BODY_LIMIT = 1024;

/**
 * What a delivery to a name that has no public address records, whether the name does not exist
 * or resolves to a private one: telling the two apart, or naming the address, would let any key
 * holder map the server's network.
 */
export const NO_PUBLIC_ADDRESS = `refused: the host has no public address (it does not resolve, or resolves to ${PRIVATE_ADDRESS})`;

export interface SendOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** A name's lookup that has not answered by then fails the attempt (the attempt's own deadline still applies). */
  dnsTimeoutMs: number;
  allowPrivateNetworks: boolean;
}

export type SendResult =
  { ok: true; status: number; body: string; durationMs: number } | { ok: false; status: number | null; body: string | null; durationMs: number; error: string };

/** A failure whose message is fit to record as it is. */
export class DeliveryRefusal extends Error {
  override name = 'DeliveryRefusal';
}

/** dns.lookup with a deadline: a slow name fails this attempt fast instead of holding a job slot. */
function lookupWithin(hostname: string, options: dns.LookupOptions, timeoutMs: number, callback: (error: Error | null, list: dns.LookupAddress[]) => void) {
  let done = false;
  const finish = (error: Error | null, list: dns.LookupAddress[]) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    callback(error, list);
  };
  // getaddrinfo cannot be cancelled: a lookup past its deadline finishes unheard.
  const timer = setTimeout(() => finish(new DeliveryRefusal(`the host's DNS lookup took longer than ${timeoutMs} ms`), []), timeoutMs);
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => finish(error, addresses));
}

/** A lookup that resolves as usual and refuses the connection when any answer is not public (warehouse sources use it too). */
export function guardedLookup(allowPrivate: boolean, timeoutMs: number): LookupFunction {
  return (hostname, options, callback) => {
    lookupWithin(hostname, options, timeoutMs, (error, list) => {
      if (error instanceof DeliveryRefusal) return callback(error, '', 0);
      // A missing name and a private one read alike, unless private networks are allowed anyway.
      if (error) return callback(allowPrivate ? error : new DeliveryRefusal(NO_PUBLIC_ADDRESS), '', 0);
      if (!allowPrivate && (list.length === 0 || list.some((entry) => isRefusedAddress(entry.address)))) {
        return callback(new DeliveryRefusal(NO_PUBLIC_ADDRESS), '', 0);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new DeliveryRefusal('the host has no address'), '', 0);
      return callback(null, first.address, first.family);
    });
  };
}

/** Why a URL cannot be sent to before any connection, or null. */
export function urlRefusal(url: URL, allowPrivate: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `refused: only http and https URLs are delivered to, not ${url.protocol}`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate || isIP(host) === 0) return null;
  return isRefusedAddress(host) ? `refused: ${PRIVATE_ADDRESS}` : null;
}

/** The body as recorded: PostgreSQL's text refuses U+0000, so a NUL a receiver sends is kept as U+FFFD. */
function storableText(bytes: Buffer): string {
  return bytes.subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replaceAll('\u0000', '\ufffd');
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
    response.on('end', () => resolve(storableText(Buffer.concat(chunks))));
    response.on('close', () => resolve(storableText(Buffer.concat(chunks))));
    response.on('error', reject);
  });
}

/** One POST; never throws. A 2xx answered within the deadline is the only success. */
export async function sendDelivery(options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // Checked when saved; a row saved before that check could still hold a URL no parser accepts.
  const url = parseUrl(options.url);
  if (!url) return { ok: false, status: null, body: null, durationMs: elapsed(), error: 'refused: the URL is not a valid URL' };
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
          lookup: guardedLookup(options.allowPrivateNetworks, options.dnsTimeoutMs),
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
  if (error instanceof DeliveryRefusal) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${code}: ${message}` : message;
}
