import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest test files to list at the end; .ci/run asks for ten. Unset or 0: none. */
const SLOWEST_FILES_VARIABLE = 'VERDICT_TEST_SLOWEST_FILES';

export interface FileTime {
  file: string;
  seconds: number;
}

/** The `count` longest files, longest first. A file's time is what its worker spent on it: setting up, importing, running. */
export function slowestFiles(times: readonly FileTime[], count: number): FileTime[] {
  return [...times].sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file)).slice(0, Math.max(0, count));
}

function timeOf(module: TestModule): FileTime {
  const d = module.diagnostic();
  const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
  return { file: module.relativeModuleId, seconds: ms / 1000 };
}

export function formatSlowest(times: readonly FileTime[]): string {
  if (times.length === 0) return '';
  const lines = times.map(({ file, seconds }) => `${seconds.toFixed(1).padStart(7)} s  ${file}`);
  return `\nThe ${times.length} slowest test files:\n${lines.join('\n')}\n`;
}

/**
 * Ends the run with one plain line, "N passed, N failed, N skipped", that CI systems and
 * people can read without knowing vitest's own summary format; with VERDICT_TEST_SLOWEST_FILES=N,
 * the N slowest files before it. It only writes: what passes or fails is vitest's own verdict.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
    }
    const count = Number(process.env[SLOWEST_FILES_VARIABLE] ?? 0);
    if (Number.isInteger(count) && count > 0) process.stdout.write(formatSlowest(slowestFiles(testModules.map(timeOf), count)));
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
