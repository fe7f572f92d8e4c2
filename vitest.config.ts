import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Files stay isolated (Vitest's default): each runs in a fresh process, so no module state,
    // timer or process-wide listener of one file reaches the next. Each file pays for importing the
    // app again (about 2 s of CPU); `--no-isolate` saves that, at the price of files sharing
    // processes, which the whole suite has not been checked for.
    // Vitest's default (cores - 1) runs one file at a time on the 2-core CI machine, leaving a core
    // idle while a file waits on its child processes, PostgreSQL, Redis or Chromium: two at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Room for the tests that start several verdict processes (each costs seconds of CPU) while the other file runs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
