import { describe, expect, it } from 'vitest';
import { formatSlowest, slowestFiles } from './summary-reporter.js';

describe('summary reporter: the slowest test files', () => {
  const times = [
    { file: 'test/a.test.ts', seconds: 3.2 },
    { file: 'test/b.test.ts', seconds: 41.26 },
    { file: 'test/c.test.ts', seconds: 0.4 },
    { file: 'test/d.test.ts', seconds: 12 },
  ];

  it('lists the slowest files first, as many as asked', () => {
    expect(slowestFiles(times, 2).map((t) => t.file)).toEqual(['test/b.test.ts', 'test/d.test.ts']);
    expect(slowestFiles(times, 10)).toHaveLength(4);
    expect(slowestFiles(times, 0)).toEqual([]);
  });

  it('prints one line per file with its seconds, and nothing for none', () => {
    const printed = formatSlowest(slowestFiles(times, 2));
    expect(printed).toContain('The 2 slowest test files:');
    expect(printed).toMatch(/ 41\.3 s {2}test\/b\.test\.ts\n/);
    expect(printed.indexOf('test/b.test.ts')).toBeLessThan(printed.indexOf('test/d.test.ts'));
    expect(formatSlowest([])).toBe('');
  });
});
