import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest in a whole-suite run on the CI machine, longest first: the summary
 * reporter's list at the end of .ci/run's output (`VERDICT_TEST_SLOWEST_FILES=20 npm test` lists
 * twenty). Refresh it from that list when it changes; a file no longer here is simply not moved,
 * and a missing one only runs later than it could.
 */
export const SLOWEST_FILES: readonly string[] = [
  'test/scaled/shutdown-processes.test.ts',
  'test/docs/shell-blocks.test.ts',
  'test/events/clickhouse-kill.test.ts',
  'test/analysis/incremental-kill.test.ts',
  'test/scaled/shutdown.test.ts',
  'test/analysis/incremental.test.ts',
  'test/analysis/clickhouse-refresh-kill.test.ts',
  'test/scaled/background-lifecycle.test.ts',
  'test/foundation/cli.test.ts',
  'test/alerts/alerts.test.ts',
  'test/foundation/cli-database.test.ts',
  'test/events/writer-thread.test.ts',
  'test/events/no-loss.test.ts',
  'test/analysis/conformance/conformance.test.ts',
  'test/people/accounts.test.ts',
  'test/analysis/background.test.ts',
  'test/events/dedupe.test.ts',
  'test/analysis/effects.test.ts',
  'test/analysis/clickhouse.test.ts',
  'test/scaled/cluster.test.ts',
];

/** Where `file` (a path relative to the root) stands in SLOWEST_FILES, or the list's length when it is not there. */
export function slownessRank(file: string): number {
  const rank = SLOWEST_FILES.indexOf(file.replaceAll('\\', '/'));
  return rank === -1 ? SLOWEST_FILES.length : rank;
}

/**
 * Starts the slowest files first, then the rest in Vitest's own order (by the durations of its
 * cache when it has one, else larger files first). A fresh clone, as in CI, has no cache: the
 * longest files could then start last and keep one worker busy long after the other ran out of
 * files. Longest first, the two workers finish close together.
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => slownessRank(spec.moduleId.slice(root.length + 1));
    // Array.prototype.sort is stable: files of equal rank keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
