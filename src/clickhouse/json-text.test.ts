import { describe, expect, it } from 'vitest';
import { clickhouseJsonText } from './json-text.js';

describe('clickhouseJsonText (the properties text ClickHouse stores)', () => {
  it('writes an integer literal beyond UInt64 in exponent form, the same double', () => {
    expect(clickhouseJsonText('{"amount":18446744073709552000}')).toBe('{"amount":1.8446744073709552e+19}');
    expect(clickhouseJsonText('{"amount":18446744073709551616}')).toBe('{"amount":1.8446744073709552e+19}');
    expect(clickhouseJsonText('{"amount":100000000000000000000}')).toBe('{"amount":1e+20}');
    expect(clickhouseJsonText('{"amount":123456789012345678901234567890}')).toBe('{"amount":1.2345678901234568e+29}');
  });

  it('writes an integer literal below Int64 in exponent form', () => {
    expect(clickhouseJsonText('{"amount":-9223372036854775809}')).toBe('{"amount":-9.223372036854776e+18}');
    expect(clickhouseJsonText('{"amount":-9223372036854780000}')).toBe('{"amount":-9.22337203685478e+18}');
    expect(clickhouseJsonText('{"amount":-18446744073709552000}')).toBe('{"amount":-1.8446744073709552e+19}');
  });

  it('rewrites them inside nested objects and arrays, and nothing else', () => {
    const text = JSON.stringify({ a: { b: [1, 2 ** 64, { c: -(2 ** 70) }], d: 'x' }, e: 2 ** 53 + 2, f: [0.5, -0, 1e21] });
    expect(text).toBe('{"a":{"b":[1,18446744073709552000,{"c":-1.1805916207174113e+21}],"d":"x"},"e":9007199254740994,"f":[0.5,0,1e+21]}');
    expect(clickhouseJsonText(text)).toBe(
      '{"a":{"b":[1,1.8446744073709552e+19,{"c":-1.1805916207174113e+21}],"d":"x"},"e":9007199254740994,"f":[0.5,0,1e+21]}',
    );
    expect(JSON.parse(clickhouseJsonText(text))).toEqual(JSON.parse(text));
    expect(clickhouseJsonText('[[[100000000000000000000]],{"k":[-9999999999999999999]}]')).toBe('[[[1e+20]],{"k":[-1e+19]}]');
  });

  it('leaves digits inside strings and keys untouched, escapes and all', () => {
    const text = JSON.stringify({
      '100000000000000000000': '123456789012345678901234567890',
      'q"-9223372036854775809': 'a \\" 18446744073709551616 \\',
      n: 18446744073709552000,
    });
    expect(clickhouseJsonText(text)).toBe(text.replace(':18446744073709552000', ':1.8446744073709552e+19'));
    const onlyInStrings = JSON.stringify({ id: '18446744073709551616', note: 'x"-9223372036854775809"y', u: 'ünï 99999999999999999999' });
    expect(clickhouseJsonText(onlyInStrings)).toBe(onlyInStrings);
  });

  it('leaves integers within UInt64 or Int64 as they are, 19- and 20-digit ones too', () => {
    for (const text of [
      '{"amount":18446744073709551615}',
      '{"amount":9999999999999999999}',
      '{"amount":9223372036854775808}',
      '{"amount":-9223372036854775808}',
      '{"amount":-999999999999999999}',
      '{"amount":1234567890123456789.5}',
      '{"amount":12345678901234567890123e0}',
      '{"amount":1e+21,"b":[12,-3.5e-7]}',
      '{}',
    ])
      expect(clickhouseJsonText(text)).toBe(text);
  });
});
