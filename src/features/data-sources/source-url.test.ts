import { describe, expect, it } from 'vitest';
import { maskSourceUrl, scrubbed, sourceUrlDefect } from './source-url.js';

describe('a data source’s URL', () => {
  it('is masked without its password or query string, and keeps what a person recognises', () => {
    expect(maskSourceUrl('postgres://analyst:s3cr%40t@db.example.com:5432/events?sslmode=require')).toBe('postgres://analyst:…@db.example.com:5432/events');
    expect(maskSourceUrl('https://default:pw@ch.example.com:8443/analytics')).toBe('https://default:…@ch.example.com:8443/analytics');
    expect(maskSourceUrl('postgres://db.example.com/events')).toBe('postgres://db.example.com/events');
    expect(maskSourceUrl('chdb:/var/lib/chdb')).toBe('chdb:/var/lib/chdb');
    expect(maskSourceUrl('not a url')).toBe('…');
  });

  it('is refused when it is not the kind’s or carries what Verdict does not read, without quoting it', () => {
    const cases: Array<['postgres' | 'clickhouse', string]> = [
      ['postgres', 'mysql://u:TopSecret@db/x'],
      ['postgres', 'postgres://u:TopSecret@db.example.com'],
      ['postgres', 'postgres://u:TopSecret@db.example.com/x?host=/tmp'],
      ['postgres', 'postgres://u:TopSecret@db.example.com/x?sslmode=bogus'],
      ['clickhouse', 'postgres://u:TopSecret@db.example.com/x'],
      ['clickhouse', 'https://u:TopSecret@ch.example.com/x?readonly=0'],
      ['clickhouse', 'chdb:'],
    ];
    for (const [kind, url] of cases) {
      const defect = sourceUrlDefect(kind, url);
      expect(defect, url).not.toBeNull();
      expect(defect).not.toContain('TopSecret');
    }
    expect(sourceUrlDefect('postgres', 'postgresql://u:p@db.example.com:6432/x?sslmode=verify-full&application_name=v')).toBeNull();
    expect(sourceUrlDefect('clickhouse', 'https://u:p@ch.example.com:8443/x')).toBeNull();
  });

  it('is cut out of a driver’s message, encoded or not', () => {
    const url = 'postgres://u:p%40ss%2Fword@db.example.com/x';
    expect(scrubbed(`failed for p@ss/word and p%40ss%2Fword at ${url}`, url)).toBe('failed for … and … at …');
  });
});
