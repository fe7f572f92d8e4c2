import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

const KEY = `vd_srv_all_${'A1b2'.repeat(11)}`;
const SECRET = `whsec_${'Zz9'.repeat(15)}`;

describe('redactUrl', () => {
  it('censors credential-like parameters whatever their case or encoding', () => {
    expect(redactUrl('/v1/x?API_KEY=a&limit=2&Secret=b&%74oken=c&key=')).toBe(
      '/v1/x?API_KEY=[redacted]&limit=2&Secret=[redacted]&%74oken=[redacted]&key=[redacted]',
    );
  });

  it('leaves URLs without credentials, and names that only contain one, as they are', () => {
    for (const url of [
      '/v1/x',
      '/v1/x?',
      '/v1/x?limit=5&cursor=abc',
      '/v1/x?monkey=1&keys=2&key',
      '/v1/x?%zz=1',
      '/v1/x?cursor=vdx_01ARZ3NDEKTSV4RRFFQ69G5FAV&a=%25',
    ])
      expect(redactUrl(url)).toBe(url);
  });

  it('censors a key or secret by its look: bare, as a name, encoded once, twice or deeper, beside broken escapes, in the path', () => {
    const cases: Array<[string, string]> = [
      [`/v1/x?${KEY}`, '/v1/x?[redacted]'],
      [`/v1/x?${KEY}=1`, '/v1/x?[redacted]'],
      [`/v1/x?limit=5&${KEY}`, '/v1/x?limit=5&[redacted]'],
      [`/v1/x?${SECRET}`, '/v1/x?[redacted]'],
      [`/v1/x?x=${KEY.replaceAll('_', '%255F')}`, '/v1/x?x=[redacted]'],
      [`/v1/x?x=${KEY.replaceAll('_', '%25255f')}&limit=5`, '/v1/x?x=[redacted]&limit=5'],
      [`/v1/x?x=%zz${KEY.replaceAll('_', '%5F')}%E0%`, '/v1/x?x=[redacted]'],
      [`/v1/x?x=${SECRET.replace('whsec', '%77hsec')}`, '/v1/x?x=[redacted]'],
      [`/v1/x?a=1;b=${KEY}`, '/v1/x?a=1;b=[redacted]'],
      [`/v1/${KEY.replaceAll('_', '%255F')}/y`, '/v1/[redacted]/y'],
      // Encoded deeper than any client would: censored without decoding to the end.
      [`/v1/x?x=${KEY.replaceAll('_', `%${'25'.repeat(12)}5F`)}`, '/v1/x?x=[redacted]'],
    ];
    for (const [url, logged] of cases) expect(redactUrl(url), url).toBe(logged);
  });
});
