import http from 'node:http';
import { expect } from 'vitest';
import type { TestServer } from '../support/server.js';

/** A person's signed-in browser: the cookie to send and the CSRF token to send with changes. */
export interface PersonSession {
  cookie: string;
  token: string;
  csrf: string;
  /** Headers for a read (cookie) and for a change (cookie and CSRF token). */
  read: Record<string, string>;
  change: Record<string, string>;
}

export const PASSWORD = 'correct horse battery staple';

export function sessionFrom(setCookie: string, csrf: string): PersonSession {
  const token = /verdict_session=([^;]+)/.exec(setCookie)?.[1];
  if (!token) throw new Error(`no session cookie in ${setCookie}`);
  const cookie = `verdict_session=${token}`;
  return { cookie, token, csrf, read: { cookie }, change: { cookie, 'x-csrf-token': csrf } };
}

export async function signInAs(server: TestServer, email: string, password = PASSWORD): Promise<PersonSession> {
  const response = await server.request('POST', '/ui/session', { body: { email, password } });
  expect(response.status, response.text).toBe(201);
  return sessionFrom(response.headers.get('set-cookie') ?? '', response.body.csrf_token);
}

/** Invites through the API with a server key and accepts the invitation; returns the user and the link. */
export async function addPerson(server: TestServer, key: string, email: string, role: 'admin' | 'editor' | 'viewer', name = email.split('@')[0]) {
  const invited = await server.request('POST', '/v1/users', { key, body: { email, role } });
  expect(invited.status, invited.text).toBe(201);
  const token = new URL(invited.body.invite_url).pathname.split('/').pop() as string;
  const accepted = await server.request('POST', `/v1/invitations/${token}/accept`, { body: { name, password: PASSWORD } });
  expect(accepted.status, accepted.text).toBe(200);
  return { user: accepted.body.user as { id: string; email: string; name: string; role: string }, inviteUrl: invited.body.invite_url as string, token };
}

/** A JSON request from a chosen loopback address (127.0.0.2, ...), to stand for another client. */
export function requestFrom(
  server: TestServer,
  localAddress: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; setCookie: string }> {
  const target = new URL(server.url + path);
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method,
        localAddress,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const setCookie = response.headers['set-cookie']?.join('; ') ?? '';
          resolve({ status: response.statusCode ?? 0, body: text && /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(text) : text, setCookie });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
