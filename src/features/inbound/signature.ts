// Webhook signature checks (see docs/webhooks.md "Signing" and "Checks, in this order").
//
// Inbound sources use Stripe's scheme: `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=...]`
// where each v1 is hex HMAC-SHA256, keyed with a source secret, over `<t>.<raw body bytes>`.
// Several v1 values and several secrets are accepted because that is how rotation works (both
// secrets verify for 24 hours). The task tool (ClickUp-shaped) signs `X-Signature` with hex
// HMAC-SHA256 of the raw body alone. Both compare digests in constant time, and both take the
// body as bytes: verifying a re-parsed and re-serialised JSON body is the classic failure.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { computeSignature } from '../../lib/webhook-signing.js';

export type HeaderValue = string | readonly string[] | null | undefined;

export interface ParsedSignatureHeader {
  /** Unix seconds from `t`. */
  timestamp: number;
  /** `t` exactly as sent: it is what the sender signed. */
  timestampText: string;
  /** The `v1` digests, lower-cased; at least one. */
  signatures: string[];
}

export type SignatureFailure = 'missing' | 'malformed' | 'expired' | 'future' | 'mismatch';

export type InboundSignatureResult = { ok: true } | { ok: false; reason: SignatureFailure };

export type TaskToolSignatureResult = { ok: true } | { ok: false; reason: Extract<SignatureFailure, 'missing' | 'malformed' | 'mismatch'> };

export interface VerifyInboundSignatureInput {
  header: HeaderValue;
  rawBody: Uint8Array;
  /** Every secret currently valid for the source: during a rotation, the new and the old. */
  secrets: readonly string[];
  nowSeconds: number;
  /** Maximum age, and maximum lead into the future, of `t`. */
  toleranceSeconds?: number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-f]{64}$/i;
// Digits only: no sign, fraction or exponent. 15 digits keep it an exact integer (year 33658).
const UNIX_SECONDS = /^[0-9]{1,15}$/;
const SCHEME = /^[a-z][a-z0-9]*$/i;

/**
 * Parses `t=<unix_seconds>,v1=<hex>[,v1=<hex>...]`. Other schemes (`v0=...`) are ignored so that
 * senders can add new ones, and so is a `v1` that is not a SHA-256 hex digest: it cannot match,
 * and one valid signature beside it must still verify (as Stripe's own libraries do). Anything
 * else out of shape (no `t`, two `t`, no usable `v1`, an empty or `=`-less element) makes the
 * header malformed (null). Whitespace around elements is tolerated because proxies insert it
 * when joining headers.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | null {
  let timestampText: string | undefined;
  const signatures: string[] = [];
  for (const element of header.split(',')) {
    const part = element.trim();
    const equals = part.indexOf('=');
    if (equals <= 0 || equals === part.length - 1) return null;
    const key = part.slice(0, equals);
    const value = part.slice(equals + 1);
    if (key === 't') {
      if (timestampText !== undefined || !UNIX_SECONDS.test(value)) return null;
      timestampText = value;
    } else if (key === 'v1') {
      if (HEX_SHA256.test(value)) signatures.push(value.toLowerCase());
    } else if (!SCHEME.test(key)) {
      return null;
    }
  }
  if (timestampText === undefined || signatures.length === 0) return null;
  return { timestamp: Number(timestampText), timestampText, signatures };
}

// The signer is shared with outbound deliveries (lib/webhook-signing.ts).
export { computeSignature };

/** Hex HMAC-SHA256 of the raw body alone, as the task tool signs its callbacks. */
export function computeTaskToolSignature(secret: string, rawBody: Uint8Array): string {
  assertBytes(rawBody);
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * Checks an inbound `X-Service-Signature`. The timestamp is checked before any HMAC is
 * computed, so stale replays cost nothing; every failure is a 401 for the caller anyway.
 */
export function verifyInboundSignature(input: VerifyInboundSignatureInput): InboundSignatureResult {
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  assertBytes(input.rawBody);
  if (!Number.isFinite(input.nowSeconds)) throw new TypeError('nowSeconds must be a finite number');
  if (!(tolerance >= 0 && Number.isFinite(tolerance))) {
    throw new TypeError('toleranceSeconds must be a finite, non-negative number');
  }
  const header = singleHeader(input.header);
  if (header === undefined) return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(header);
  if (parsed === null) return { ok: false, reason: 'malformed' };
  // "More than 5 minutes" old or ahead fails; exactly 5 minutes still passes.
  if (input.nowSeconds - parsed.timestamp > tolerance) return { ok: false, reason: 'expired' };
  if (parsed.timestamp - input.nowSeconds > tolerance) return { ok: false, reason: 'future' };
  const expected = usableSecrets(input.secrets).map((secret) => Buffer.from(computeSignature(secret, parsed.timestampText, input.rawBody), 'hex'));
  return matchesAny(expected, parsed.signatures) ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/** Checks a task-tool `X-Signature`: one hex digest, no timestamp. */
export function verifyTaskToolSignature(header: HeaderValue, rawBody: Uint8Array, secret: string): TaskToolSignatureResult {
  assertBytes(rawBody);
  const value = singleHeader(header);
  if (value === undefined) return { ok: false, reason: 'missing' };
  if (!HEX_SHA256.test(value)) return { ok: false, reason: 'malformed' };
  const expected = usableSecrets([secret]).map((key) => Buffer.from(computeTaskToolSignature(key, rawBody), 'hex'));
  return matchesAny(expected, [value.toLowerCase()]) ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/**
 * Compares every candidate with every expected digest through `timingSafeEqual`. Both sides
 * are 32 bytes (candidates were checked to be 64 hex digits), as timingSafeEqual requires, and
 * the loop does not stop at the first match, so timing does not tell which one matched.
 */
function matchesAny(expected: readonly Buffer[], candidates: readonly string[]): boolean {
  let matched = false;
  for (const candidate of candidates) {
    const bytes = Buffer.from(candidate, 'hex');
    for (const digest of expected) {
      matched = timingSafeEqual(digest, bytes) || matched;
    }
  }
  return matched;
}

/** An empty secret is a configuration fault, never a key anyone should be able to sign with. */
function usableSecrets(secrets: readonly string[]): string[] {
  return secrets.filter((secret) => typeof secret === 'string' && secret.length > 0);
}

/**
 * Node joins repeated unknown headers with ", " but hands some as arrays; either way the
 * elements are comma-separated parts of one value. Blank counts as missing.
 */
function singleHeader(header: HeaderValue): string | undefined {
  const value = typeof header === 'string' ? header : header?.join(',');
  if (value === undefined || value.trim() === '') return undefined;
  return value.trim();
}

function assertBytes(rawBody: unknown): void {
  // A string here almost always means a parsed-and-re-serialised body, which cannot verify.
  if (!(rawBody instanceof Uint8Array)) {
    throw new TypeError('rawBody must be the raw request bytes (Buffer or Uint8Array)');
  }
}
