import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with one request: pass it on, answer 503 or 429 itself, or pass it on and
 * cut the connection once Verdict has answered (the events are stored, the client never hears).
 */
export type Fault = 'forward' | 'unavailable' | 'rate-limited' | 'cut-after-answer';

export interface ProxiedRequest {
  fault: Fault;
  receivedAt: number;
  /** client_event_ids in the request body (events batches only). */
  ids: string[];
}

export interface FaultProxy {
  url: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

const RETRY_AFTER_SECONDS = 1;

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function eventIds(body: Buffer): string[] {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { events?: { client_event_id?: string }[] };
    return (parsed.events ?? []).map((event) => event.client_event_id ?? '');
  } catch {
    return [];
  }
}

function problem(response: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  response.end(JSON.stringify({ type: 'about:blank', title, status }));
}

async function forward(target: string, request: http.IncomingMessage, body: Buffer) {
  const upstream = await fetch(target + (request.url ?? '/'), {
    method: request.method ?? 'GET',
    headers: {
      authorization: request.headers.authorization ?? '',
      'content-type': request.headers['content-type'] ?? 'application/json',
    },
    ...(body.length > 0 ? { body } : {}),
  });
  return { status: upstream.status, contentType: upstream.headers.get('content-type') ?? 'application/json', text: await upstream.text() };
}

/** A node:http proxy in front of Verdict that misbehaves as `plan` says for the n-th request (from 1). */
export async function startFaultProxy(target: string, plan: (n: number) => Fault): Promise<FaultProxy> {
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const fault = plan(requests.length + 1);
      requests.push({ fault, receivedAt: Date.now(), ids: eventIds(body) });
      if (fault === 'unavailable') return problem(response, 503, 'Service Unavailable');
      if (fault === 'rate-limited') return problem(response, 429, 'Too Many Requests', { 'retry-after': String(RETRY_AFTER_SECONDS) });
      const answer = await forward(target, request, body);
      if (fault === 'cut-after-answer') {
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, { 'content-type': answer.contentType });
      response.end(answer.text);
    })().catch(() => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
