import { describe, expect, it } from 'vitest';
import { redactUrl } from './logger.js';

describe('redactUrl', () => {
  it('censors credential-like parameters whatever their case or encoding', () => {
    expect(redactUrl('/v1/x?API_KEY=a&limit=2&Secret=b&%74oken=c&key=')).toBe(
      '/v1/x?API_KEY=[redacted]&limit=2&Secret=[redacted]&%74oken=[redacted]&key=[redacted]',
    );
  });

  it('leaves URLs without credentials, and names that only contain one, as they are', () => {
    for (const url of ['/v1/x', '/v1/x?', '/v1/x?limit=5&cursor=abc', '/v1/x?monkey=1&keys=2&key', '/v1/x?%zz=1']) expect(redactUrl(url)).toBe(url);
  });
});
