import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * What the receiver does with the next request: answer a status, never answer, answer 200 with
 * a body that never ends (ASCII digits written until the sender hangs up), or answer a given body.
 */
export type Behaviour = number | 'hang' | 'endless' | { status: number; body: string };

/** An endless body stops here (1 GB), so a sender that reads it all fails its deadline rather than the machine. */
const ENDLESS_LIMIT = 1024 ** 3;

/** A local HTTP server that records what it is sent and answers as scripted (200 once the script runs out). */
export class Receiver {
  readonly received: Received[] = [];
  readonly script: Behaviour[] = [];
  readonly #server: http.Server;
  readonly #hanging = new Set<http.ServerResponse>();
  /** How much of an endless body was written before the sender stopped reading. */
  endlessBytesWritten = 0;

  constructor() {
    this.#server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const behaviour = this.script.shift() ?? 200;
        if (behaviour === 'hang') {
          this.#hanging.add(response);
          return;
        }
        if (behaviour === 'endless') {
          this.#hanging.add(response);
          this.endlessBytesWritten = 0;
          response.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = '0123456789'.repeat(1_000);
          const writeMore = () => {
            while (!response.destroyed && this.endlessBytesWritten < ENDLESS_LIMIT) {
              this.endlessBytesWritten += chunk.length;
              if (!response.write(chunk)) return void response.once('drain', writeMore);
            }
          };
          writeMore();
          return;
        }
        if (typeof behaviour === 'object') return void response.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end(behaviour.body);
        response.writeHead(behaviour, { 'content-type': 'text/plain' }).end(`answered ${behaviour}`);
      });
    });
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => resolve());
    });
    return (this.#server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  bodies(): any[] {
    return this.received.map((item) => JSON.parse(item.body));
  }
}

/**
 * The receiver's check, written from docs/webhooks.md and not from src: parse
 * `t=<seconds>,v1=<hex>[,v1=<hex>]`, and accept when some v1 equals the hex HMAC-SHA256 of
 * "<t>.<raw body>" keyed with the secret, compared in constant time.
 */
export function verifies(header: string | string[] | undefined, body: string, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const parts = header.split(',').map((part) => part.trim().split('=') as [string, string]);
  const t = parts.find(([key]) => key === 't')?.[1];
  if (!t) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.filter(([key]) => key === 'v1').some(([, value]) => value.length === 64 && timingSafeEqual(Buffer.from(value, 'hex'), expected));
}

export function signaturesIn(header: string | string[] | undefined): string[] {
  if (typeof header !== 'string') return [];
  return header
    .split(',')
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3));
}
