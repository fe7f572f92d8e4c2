import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOWEST_FILES, slownessRank } from './slow-first-sequencer.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('slow-first sequencer: the slowest files start first', () => {
  it('names test files that exist, once each (a renamed file would quietly lose its place)', () => {
    for (const file of SLOWEST_FILES) expect(fs.existsSync(path.join(root, file)), file).toBe(true);
    expect(new Set(SLOWEST_FILES).size).toBe(SLOWEST_FILES.length);
  });

  it('ranks a listed file by its place in the list, and every other file after all of them', () => {
    expect(slownessRank('test/scaled/shutdown-processes.test.ts')).toBe(0);
    expect(slownessRank('test/docs/shell-blocks.test.ts')).toBe(1);
    expect(slownessRank('src/config.test.ts')).toBe(SLOWEST_FILES.length);
  });
});
