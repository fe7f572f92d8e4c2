import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Vitest's default (cores - 1) runs one file at a time on the 2-core CI machine, leaving a core
    // idle while a file waits on its child processes, PostgreSQL, Redis or Chromium: two at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Room for the tests that start several verdict processes (each costs seconds of CPU) while the other file runs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
