import os from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Files stay isolated (Vitest's default): each runs in a fresh process, so no module state,
    // timer or process-wide listener of one file reaches the next. The price is importing the app
    // again for every file: `npx vitest run --no-isolate FILES` spends about 2 s less CPU per
    // in-process file than `npx vitest run FILES`, but the whole suite has not been run that way.
    // Vitest's default (cores - 1) runs one file at a time on the 2-core CI machine, leaving a core
    // idle while a file waits on its child processes, PostgreSQL, Redis or Chromium: two at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Room for the tests that start several verdict processes (each costs seconds of CPU) while the other file runs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // The slowest files first, so that the two workers end together (see the sequencer).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
