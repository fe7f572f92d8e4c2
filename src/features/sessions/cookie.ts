import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_MS } from './service.js';

export const SESSION_COOKIE = 'verdict_session';

/** The session token from the Cookie header, if any (the auth hook runs before any cookie plugin). */
export function sessionTokenOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const token = fastifyCookie.parse(header)[SESSION_COOKIE];
  return token ? token : null;
}

/**
 * Whether the browser reached us over https: directly, or through a TLS-terminating proxy that
 * says so. A forged X-Forwarded-Proto can only make the cookie stricter (the browser then keeps
 * it off plain http), so the header is safe to believe here.
 */
export function viaHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

// httpOnly keeps the token away from scripts; SameSite=Strict keeps other sites' pages from
// sending it at all; Secure whenever the browser reached us over https. Max-Age rather than
// Expires: the browser counts it from receipt, so a skewed server clock cannot shorten it.
function cookieOptions(request: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure: viaHttps(request) };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(request), maxAge: SESSION_TTL_MS / 1000 });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
}
