import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TurnBatchedResponse } from './turn-batched-response.js';

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

const servers: http.Server[] = [];

async function serve(handler: Handler): Promise<string> {
  const server = http.createServer({ ServerResponse: TurnBatchedResponse as unknown as typeof http.ServerResponse }, handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Sends raw bytes on one connection and collects what comes back until the server closes it or `until` holds. */
function exchange(host: string, bytes: string, until: (received: string) => boolean): Promise<string> {
  const [address, port] = host.split(':');
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = net.connect(Number(port), address, () => socket.write(bytes));
    socket.on('data', (chunk) => {
      received += chunk.toString();
      if (until(received)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('TurnBatchedResponse', () => {
  it('writes an ended response at the end of the turn, and reads as ended from the moment end is called', async () => {
    const seen: Array<{ endedAtOnce: boolean; bytesAtOnce: number; bytesAfterTurn: number }> = [];
    const host = await serve((request, response) => {
      const before = request.socket.bytesWritten;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
      const endedAtOnce = response.writableEnded;
      const bytesAtOnce = request.socket.bytesWritten - before;
      setImmediate(() => seen.push({ endedAtOnce, bytesAtOnce, bytesAfterTurn: request.socket.bytesWritten - before }));
    });

    const answer = await fetch(`http://${host}/`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.endedAtOnce).toBe(true);
    // Nothing reached the socket when end was called; head and body did once the turn was over.
    expect(seen[0]?.bytesAtOnce).toBe(0);
    expect(seen[0]?.bytesAfterTurn).toBeGreaterThan('{"ok":true}'.length);
  });

  it('answers many concurrent requests, each with its own body', async () => {
    const host = await serve((request, response) => {
      response.setHeader('content-type', 'text/plain');
      response.end(`you asked for ${request.url}`);
    });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, n) => fetch(`http://${host}/item/${n}`).then((r) => r.text())));
    expect(answers).toEqual(Array.from({ length: 200 }, (_, n) => `you asked for /item/${n}`));
  });

  it('answers pipelined requests on one connection in order', async () => {
    let count = 0;
    const host = await serve((request, response) => {
      // The first answers a turn later than the second is ready to: order must still hold.
      const body = `${request.url} #${++count}`;
      if (request.url === '/first') setImmediate(() => response.end(body));
      else response.end(body);
    });
    const requests = ['/first', '/second', '/third'].map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
    const received = await exchange(host, requests, (text) => text.includes('/third #3'));
    const bodies = received.match(/\/(first|second|third) #\d/g);
    expect(bodies).toEqual(['/first #1', '/second #2', '/third #3']);
  });

  it('streams a body piped into it, and calls the callback given to end', async () => {
    const endCallbacks: string[] = [];
    const host = await serve((request, response) => {
      if (request.url === '/piped') return void Readable.from(['one,', 'two,', 'three']).pipe(response);
      response.end('done', () => endCallbacks.push(request.url ?? ''));
    });
    expect(await fetch(`http://${host}/piped`).then((r) => r.text())).toBe('one,two,three');
    expect(await fetch(`http://${host}/callback`).then((r) => r.text())).toBe('done');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(endCallbacks).toEqual(['/callback']);
  });

  it('survives a client that goes away between the end and the write, and keeps serving', async () => {
    let destroyedBeforeWrite = 0;
    const host = await serve((request, response) => {
      response.end('late');
      if (request.url === '/gone') {
        request.socket.destroy();
        destroyedBeforeWrite++;
      }
    });
    const [address, port] = host.split(':');
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), address, () => socket.write('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.resume();
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(destroyedBeforeWrite).toBe(1);
    expect(await fetch(`http://${host}/after`).then((r) => r.text())).toBe('late');
  });
});
