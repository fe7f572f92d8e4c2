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

/**
 * The suites of test/ that share their test processes too (about 2 s of CPU saved per file, the
 * app's import): each works on a private database through servers in this process
 * (startTestServer) that it closes after its tests, starts no `verdict` process, browser,
 * embedded ClickHouse engine or thread outside those servers, mocks nothing process-wide and sets
 * no environment variable. They all passed sharing processes, in the whole suite and alone
 * (`npx vitest run --project shared`). A new suite runs in its own process unless added here.
 */
const SHARED_PROCESS_SUITES = [
  'test/alerts/alerts.test.ts',
  'test/alerts/experiment-filter.test.ts',
  'test/alerts/recommendation.test.ts',
  'test/analysis/breakdowns.test.ts',
  'test/analysis/cuped.test.ts',
  'test/analysis/effects.test.ts',
  'test/analysis/end-to-end.test.ts',
  'test/analysis/funnel-retention.test.ts',
  'test/analysis/health-texts.test.ts',
  'test/analysis/json-number.test.ts',
  'test/analysis/metric-breakdowns.test.ts',
  'test/analysis/quantile-metrics.test.ts',
  'test/analysis/recommendation.test.ts',
  'test/analysis/results.test.ts',
  'test/analysis/rules.test.ts',
  'test/analysis/secondary-metrics.test.ts',
  'test/catalogue/metric-editing.test.ts',
  'test/catalogue/metrics.test.ts',
  'test/catalogue/segments.test.ts',
  'test/catalogue/sequence-metrics.test.ts',
  'test/events/dedupe.test.ts',
  'test/events/ingest.test.ts',
  'test/experiments/assignment.test.ts',
  'test/experiments/bandits.test.ts',
  'test/experiments/experiments.test.ts',
  'test/experiments/growthbook-buckets.test.ts',
  'test/experiments/list-and-duplicate.test.ts',
  'test/experiments/list-by-name.test.ts',
  'test/experiments/sticky-cache.test.ts',
  'test/experiments/tags-owner.test.ts',
  'test/experiments/templates.test.ts',
  'test/experiments/warnings.test.ts',
  'test/foundation/audit-filters.test.ts',
  'test/foundation/auth.test.ts',
  'test/foundation/environments-audit.test.ts',
  'test/foundation/framework-errors.test.ts',
  'test/foundation/hostile-input.test.ts',
  'test/foundation/input-refusals.test.ts',
  'test/foundation/log-redaction.test.ts',
  'test/foundation/openapi-docs.test.ts',
  'test/foundation/openapi-fuzz.test.ts',
  'test/foundation/problems.test.ts',
  'test/foundation/sqlite-lock.test.ts',
  'test/foundation/tenancy.test.ts',
  'test/holdouts/analysis.test.ts',
  'test/holdouts/holdouts.test.ts',
  'test/holdouts/results.test.ts',
  'test/ofrep/ofrep.test.ts',
  'test/people/export-breakdowns.test.ts',
  'test/people/roles.test.ts',
  'test/planning/power.test.ts',
  'test/planning/snapshot.test.ts',
  'test/warehouse/assignment-snapshot.test.ts',
  'test/warehouse/assignment-sources.test.ts',
  'test/warehouse/differential.test.ts',
  'test/warehouse/fact-metrics.test.ts',
  'test/warehouse/incremental.test.ts',
  'test/warehouse/postgres-source.test.ts',
  'test/warehouse/snapshot-differential.test.ts',
  'test/webhooks/idempotency.test.ts',
  'test/webhooks/inbound.test.ts',
  'test/webhooks/outbound-urls.test.ts',
  'test/webhooks/sources.test.ts',
];

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
          exclude: [...configDefaults.exclude, ...SHARED_PROCESS_SUITES],
          // The template database and the tmpfs scratch folder; the unit tests need neither.
          globalSetup: ['test/support/global-setup.ts'],
          // Each file in a fresh process (Vitest's default), so no module state, timer or
          // process-wide listener of one file reaches the next: these start `verdict` processes,
          // browsers, engines or threads, or change something process-wide. The price is
          // importing the app again for every file (about 2 s of CPU each).
          isolate: true,
        },
      },
      {
        extends: true,
        test: { name: 'unit', include: SHARED_PROCESS_FILES, exclude: [...configDefaults.exclude, ...OWN_PROCESS_SRC_FILES], isolate: false },
      },
      {
        extends: true,
        // The same set-up as 'isolated' (its one run of global-setup.ts is shared).
        test: { name: 'shared', include: SHARED_PROCESS_SUITES, globalSetup: ['test/support/global-setup.ts'], isolate: false },
      },
    ],
  },
});
