import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeSignature, computeTaskToolSignature, parseSignatureHeader, verifyInboundSignature, verifyTaskToolSignature } from './signature.js';

// Test vector computed with Stripe's own signing helper: our inbound scheme is Stripe's
// (docs/webhooks.md "Signing").
const STRIPE_SECRET = 'whsec_test_secret';
const STRIPE_T = 1700000000;
const STRIPE_BODY = Buffer.from('{"id":"evt_test_webhook","object":"event"}', 'utf8');
const STRIPE_V1 = 'd95c6b7477fbd7e9f90b1b0ef5f9c7ac25abca5382460e0d988c2b2a5b71b990';

const OLD_SECRET = 'whsec_old';
const NEW_SECRET = 'whsec_new';
const NOW = 1_700_000_100;
const BODY = Buffer.from('{"events":[{"name":"signup","unit_id":"u-1","value":1}]}', 'utf8');

function header(t: number, ...secrets: string[]): string {
  return [`t=${t}`, ...secrets.map((secret) => `v1=${computeSignature(secret, t, BODY)}`)].join(',');
}

function verify(signature: string | string[] | undefined, secrets: string[], body: Uint8Array = BODY) {
  return verifyInboundSignature({ header: signature, rawBody: body, secrets, nowSeconds: NOW });
}

describe('computeSignature', () => {
  it('reproduces the Stripe helper vector from references.md', () => {
    expect(computeSignature(STRIPE_SECRET, STRIPE_T, STRIPE_BODY)).toBe(STRIPE_V1);
    expect(computeSignature(STRIPE_SECRET, String(STRIPE_T), STRIPE_BODY)).toBe(STRIPE_V1);
  });

  it('signs the raw bytes, including non-ASCII ones', () => {
    const body = Buffer.from('{"name":"Zoë"}', 'utf8');
    const expected = createHmac('sha256', 's')
      .update(Buffer.concat([Buffer.from('5.'), body]))
      .digest('hex');
    expect(computeSignature('s', 5, body)).toBe(expected);
  });

  it('refuses a string body, which would be a re-serialisation', () => {
    expect(() => computeSignature('s', 5, '{}' as unknown as Buffer)).toThrow(TypeError);
  });
});

describe('parseSignatureHeader', () => {
  it('reads t and several v1 values, ignoring other schemes', () => {
    const a = 'a'.repeat(64);
    const b = 'B'.repeat(64);
    expect(parseSignatureHeader(`t=1700000000,v1=${a},v0=legacy,v1=${b}`)).toEqual({
      timestamp: 1700000000,
      timestampText: '1700000000',
      signatures: [a, 'b'.repeat(64)],
    });
  });

  it('keeps the well-formed v1 values and ignores malformed ones beside them', () => {
    const a = 'a'.repeat(64);
    for (const header of [`t=1,v1=${a},v1=abc`, `t=1,v1=not-hex,v1=${a}`, `t=1,v1=${'z'.repeat(64)},v1=${a},v1=${a}00`]) {
      expect(parseSignatureHeader(header)?.signatures).toEqual([a]);
    }
  });

  it('accepts elements in any order and whitespace around them', () => {
    expect(parseSignatureHeader(` v1=${STRIPE_V1} , t=1700000000 `)).toEqual({
      timestamp: 1700000000,
      timestampText: '1700000000',
      signatures: [STRIPE_V1],
    });
  });

  it.each([
    ['empty', ''],
    ['no t', `v1=${STRIPE_V1}`],
    ['no v1', 't=1700000000'],
    ['only other schemes', 't=1700000000,v0=abc'],
    ['two t', `t=1,t=2,v1=${STRIPE_V1}`],
    ['non-numeric t', `t=abc,v1=${STRIPE_V1}`],
    ['negative t', `t=-1,v1=${STRIPE_V1}`],
    ['fractional t', `t=1.5,v1=${STRIPE_V1}`],
    ['exponent t', `t=1e9,v1=${STRIPE_V1}`],
    ['empty t', `t=,v1=${STRIPE_V1}`],
    ['short v1', 't=1,v1=abcd'],
    ['non-hex v1', `t=1,v1=${'z'.repeat(64)}`],
    ['long v1', `t=1,v1=${STRIPE_V1}00`],
    ['element without =', `t=1,v1=${STRIPE_V1},garbage`],
    ['empty element', `t=1,,v1=${STRIPE_V1}`],
    ['trailing comma', `t=1,v1=${STRIPE_V1},`],
    ['empty key', `t=1,=x,v1=${STRIPE_V1}`],
    ['odd key', `t=1,v 1=x,v1=${STRIPE_V1}`],
    ['semicolons', `t=1;v1=${STRIPE_V1}`],
  ])('rejects %s', (_name, value) => {
    expect(parseSignatureHeader(value)).toBeNull();
  });
});

describe('verifyInboundSignature', () => {
  it('accepts the Stripe vector within the tolerance', () => {
    const result = verifyInboundSignature({
      header: `t=${STRIPE_T},v1=${STRIPE_V1}`,
      rawBody: STRIPE_BODY,
      secrets: [STRIPE_SECRET],
      nowSeconds: STRIPE_T + 12,
    });
    expect(result).toEqual({ ok: true });
  });

  it('accepts any matching v1 among several', () => {
    const valid = computeSignature(NEW_SECRET, NOW, BODY);
    expect(verify(`t=${NOW},v1=${'0'.repeat(64)},v1=${valid}`, [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(`t=${NOW},v1=${valid},v1=${'0'.repeat(64)}`, [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(`t=${NOW},v1=${valid.toUpperCase()}`, [NEW_SECRET])).toEqual({ ok: true });
  });

  it('verifies with the old or the new secret during a rotation, not a retired one', () => {
    expect(verify(header(NOW, OLD_SECRET), [NEW_SECRET, OLD_SECRET])).toEqual({ ok: true });
    expect(verify(header(NOW, NEW_SECRET), [NEW_SECRET, OLD_SECRET])).toEqual({ ok: true });
    expect(verify(header(NOW, OLD_SECRET, NEW_SECRET), [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(header(NOW, OLD_SECRET), [NEW_SECRET])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('answers missing for an absent or blank header', () => {
    expect(verify(undefined, [NEW_SECRET])).toEqual({ ok: false, reason: 'missing' });
    expect(verify('  ', [NEW_SECRET])).toEqual({ ok: false, reason: 'missing' });
    expect(verify([], [NEW_SECRET])).toEqual({ ok: false, reason: 'missing' });
  });

  it('verifies one valid v1 next to a malformed one', () => {
    const valid = computeSignature(NEW_SECRET, NOW, BODY);
    expect(verify(`t=${NOW},v1=${valid},v1=abc`, [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(`t=${NOW},v1=abc,v1=${valid}`, [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(`t=${NOW},v1=abc,v1=${'0'.repeat(64)}`, [NEW_SECRET])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('answers malformed for a header out of shape', () => {
    expect(verify(`v1=${computeSignature(NEW_SECRET, NOW, BODY)}`, [NEW_SECRET])).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verify(`t=${NOW},v0=abc`, [NEW_SECRET])).toEqual({ ok: false, reason: 'malformed' });
  });

  it('joins a header that arrives as several values', () => {
    const [t, v1] = header(NOW, NEW_SECRET).split(',');
    expect(verify([t as string, v1 as string], [NEW_SECRET])).toEqual({ ok: true });
  });

  it('accepts timestamps up to exactly 5 minutes old or ahead', () => {
    expect(verify(header(NOW - 300, NEW_SECRET), [NEW_SECRET])).toEqual({ ok: true });
    expect(verify(header(NOW + 300, NEW_SECRET), [NEW_SECRET])).toEqual({ ok: true });
  });

  it('rejects a validly signed timestamp more than 5 minutes old as expired', () => {
    expect(verify(header(NOW - 301, NEW_SECRET), [NEW_SECRET])).toEqual({ ok: false, reason: 'expired' });
    expect(
      verifyInboundSignature({
        header: `t=${STRIPE_T},v1=${STRIPE_V1}`,
        rawBody: STRIPE_BODY,
        secrets: [STRIPE_SECRET],
        nowSeconds: STRIPE_T + 300.5,
      }),
    ).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects a validly signed timestamp more than 5 minutes ahead as future', () => {
    expect(verify(header(NOW + 301, NEW_SECRET), [NEW_SECRET])).toEqual({ ok: false, reason: 'future' });
  });

  it('honours a custom tolerance', () => {
    const result = verifyInboundSignature({
      header: header(NOW - 61, NEW_SECRET),
      rawBody: BODY,
      secrets: [NEW_SECRET],
      nowSeconds: NOW,
      toleranceSeconds: 60,
    });
    expect(result).toEqual({ ok: false, reason: 'expired' });
  });

  it('binds the timestamp: a signature moved to another t does not verify', () => {
    const v1 = computeSignature(NEW_SECRET, NOW - 1000, BODY);
    expect(verify(`t=${NOW},v1=${v1}`, [NEW_SECRET])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('signs t verbatim, so zero-padding it changes the signed string', () => {
    const v1 = computeSignature(NEW_SECRET, NOW, BODY);
    expect(verify(`t=0${NOW},v1=${v1}`, [NEW_SECRET])).toEqual({ ok: false, reason: 'mismatch' });
    expect(verify(`t=0${NOW},v1=${computeSignature(NEW_SECRET, `0${NOW}`, BODY)}`, [NEW_SECRET])).toEqual({
      ok: true,
    });
  });

  it('fails a re-serialised body even though it is the same JSON', () => {
    const raw = Buffer.from('{ "id": "evt_1",\n  "object": "event" }', 'utf8');
    const signed = `t=${NOW},v1=${computeSignature(NEW_SECRET, NOW, raw)}`;
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))), 'utf8');
    expect(verify(signed, [NEW_SECRET], raw)).toEqual({ ok: true });
    expect(verify(signed, [NEW_SECRET], reserialised)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('fails a body with one byte changed', () => {
    const tampered = Buffer.from(BODY);
    tampered[tampered.length - 2] = 0x30;
    expect(verify(header(NOW, NEW_SECRET), [NEW_SECRET], tampered)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('never matches with no secret or an empty secret', () => {
    expect(verify(header(NOW, NEW_SECRET), [])).toEqual({ ok: false, reason: 'mismatch' });
    const emptyKeyed = `t=${NOW},v1=${createHmac('sha256', '').update(`${NOW}.`).update(BODY).digest('hex')}`;
    expect(verify(emptyKeyed, [''])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('throws on programming errors rather than answering 401', () => {
    expect(() => verify(header(NOW, NEW_SECRET), [NEW_SECRET], BODY.toString() as unknown as Buffer)).toThrow(TypeError);
    expect(() => verifyInboundSignature({ header: 'x', rawBody: BODY, secrets: [], nowSeconds: Number.NaN })).toThrow(TypeError);
    expect(() => verifyInboundSignature({ header: 'x', rawBody: BODY, secrets: [], nowSeconds: NOW, toleranceSeconds: -1 })).toThrow(TypeError);
  });
});

describe('verifyTaskToolSignature', () => {
  const secret = 'task-tool-secret';
  const payload = Buffer.from('{"event":"taskStatusUpdated","task_id":"abc","webhook_id":"w1"}', 'utf8');
  const signature = createHmac('sha256', secret).update(payload).digest('hex');

  it('accepts the hex HMAC-SHA256 of the raw body', () => {
    expect(computeTaskToolSignature(secret, payload)).toBe(signature);
    expect(verifyTaskToolSignature(signature, payload, secret)).toEqual({ ok: true });
    expect(verifyTaskToolSignature(` ${signature.toUpperCase()} `, payload, secret)).toEqual({ ok: true });
  });

  it('rejects another secret, another body or a re-serialised body', () => {
    expect(verifyTaskToolSignature(signature, payload, 'other')).toEqual({ ok: false, reason: 'mismatch' });
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(payload.toString()), null, 1), 'utf8');
    expect(verifyTaskToolSignature(signature, reserialised, secret)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('answers missing and malformed', () => {
    expect(verifyTaskToolSignature(undefined, payload, secret)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyTaskToolSignature('', payload, secret)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyTaskToolSignature('abc', payload, secret)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyTaskToolSignature(`sha256=${signature}`, payload, secret)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('does not accept the timestamped inbound scheme, and vice versa', () => {
    const inbound = `t=${NOW},v1=${computeSignature(secret, NOW, payload)}`;
    expect(verifyTaskToolSignature(inbound, payload, secret)).toEqual({ ok: false, reason: 'malformed' });
    const result = verifyInboundSignature({
      header: `t=${NOW},v1=${signature}`,
      rawBody: payload,
      secrets: [secret],
      nowSeconds: NOW,
    });
    expect(result).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('never matches with an empty secret', () => {
    const emptyKeyed = createHmac('sha256', '').update(payload).digest('hex');
    expect(verifyTaskToolSignature(emptyKeyed, payload, '')).toEqual({ ok: false, reason: 'mismatch' });
  });
});
