// The one signing scheme of Verdict's webhooks, both ways (docs/webhooks.md "Signing"): v1 is the
// hex HMAC-SHA256, keyed with a whsec_ secret, of `<t>.<raw body bytes>` with t in unix seconds.
// The inbound verifier (features/inbound/signature.ts) checks it; outbound deliveries
// (features/webhook-endpoints) sign with it, so one receiver-side verifier serves both.
import { createHmac } from 'node:crypto';

/** Hex HMAC-SHA256 of `<t>.<raw body>`; `t` as a string is signed verbatim. */
export function computeSignature(secret: string, t: number | string, rawBody: Uint8Array): string {
  if (!(rawBody instanceof Uint8Array)) {
    // A string here almost always means a parsed-and-re-serialised body, which cannot verify.
    throw new TypeError('rawBody must be the raw request bytes (Buffer or Uint8Array)');
  }
  return createHmac('sha256', secret).update(`${t}.`, 'utf8').update(rawBody).digest('hex');
}

/**
 * `t=<t>,v1=<hex>[,v1=<hex>]`: one v1 per signing secret, so during a rotation a receiver that
 * knows either the new or the old secret verifies the delivery.
 */
export function signatureHeader(secrets: readonly string[], t: number, rawBody: Uint8Array): string {
  if (secrets.length === 0) throw new Error('a signature needs at least one secret');
  return [`t=${t}`, ...secrets.map((secret) => `v1=${computeSignature(secret, t, rawBody)}`)].join(',');
}
