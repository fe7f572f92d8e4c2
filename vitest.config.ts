import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.js';

/**
 * The unit tests beside the code (src/**), which start no server or process and leave nothing
 * process-wide behind, share their test processes: a worker runs one after the other without
 * importing their modules again (about 0.5 s of CPU saved per file). Not the three that start
 * threads: they count this process's threads and their priorities, or wait on a thread that a
 * module of theirs keeps, and a thread an earlier file left behind would change what they see.
 */
const SHARED_PROCESS_FILES = ['src/**/*.test.ts'];
const OWN_PROCESS_SRC_FILES = ['src/db/read-pool.test.ts', 'src/db/side-reads.test.ts', 'src/features/analysis/compute/thread/stats-thread.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Vitest's default (cores - 1) runs one file at a time on the 2-core CI machine, leaving a core
    // idle while a file waits on its child processes, PostgreSQL, Redis or Chromium: two at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Room for the tests that start several verdict processes (each costs seconds of CPU) while the other file runs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // The slowest files first, so that the two workers end together (see the sequencer).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts', ...OWN_PROCESS_SRC_FILES],
          // The template database and the tmpfs scratch folder; the unit tests need neither.
          globalSetup: ['test/support/global-setup.ts'],
          // Each file in a fresh process (Vitest's default), so no module state, timer or
          // process-wide listener of one file reaches the next: these start servers, processes and
          // engines. The price is importing the app again for every file: `npx vitest run
          // --no-isolate FILES` spends about 2 s less CPU per in-process file, but the whole suite
          // has not been run that way.
          isolate: true,
        },
      },
      {
        extends: true,
        test: { name: 'unit', include: SHARED_PROCESS_FILES, exclude: [...configDefaults.exclude, ...OWN_PROCESS_SRC_FILES], isolate: false },
      },
    ],
  },
});
