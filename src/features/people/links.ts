import crypto from 'node:crypto';
import { sha256Hex } from '../../lib/secrets.js';

/** 256 bits, base64url: the secret part of a cookie. */
export function randomToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/**
 * The token of a link that sits in a URL path: prefixed so that log lines censor it
 * (lib/redact-url.ts) like an API key: `vd_inv_` invitations, `vd_rst_` password resets, `vd_shr_` share links.
 */
export function linkToken(kind: 'inv' | 'rst' | 'shr'): string {
  return `vd_${kind}_${randomToken()}`;
}

/** What a link token looks like in a route's path parameter. */
export const LINK_TOKEN_PATTERN = '^vd_(inv|rst|shr)_[A-Za-z0-9_-]{43}$';

export function tokenHash(token: string): string {
  return sha256Hex(token);
}

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const PASSWORD_RESET_TTL_MS = 24 * 60 * 60 * 1000;

/** Where people reach this service: VERDICT_PUBLIC_URL, else the origin the request came to. */
export function baseUrlOf(publicUrl: string | null, origin: string): string {
  return (publicUrl ?? origin).replace(/\/+$/, '');
}

/** A one-time link's address: the token is its last path segment. */
export function linkUrl(base: string, purpose: 'invitation' | 'password_reset', token: string): string {
  return `${base}/ui/${purpose === 'invitation' ? 'invitations' : 'password-resets'}/${token}`;
}
