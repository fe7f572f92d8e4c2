import { createRequire } from 'node:module';
import type { ClickHouseConfig } from '../../src/config.js';

/**
 * The embedded ClickHouse engine (npm chdb) for tests: installed on demand (`npm install --no-save
 * chdb@3.4.0`, as .ci/run does), so a suite's ClickHouse variant is skipped with a message on a
 * machine without it, and fails in CI (CI=true), where it must run.
 */
export function chdbAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('chdb/connection');
    return true;
  } catch {
    return false;
  }
}

/** Why the ClickHouse variants cannot run here, or null (in CI they always run, and fail without chdb). */
export function clickhouseUnavailable(): string | null {
  if (process.env.CI === 'true' || process.env.CI === '1') return null;
  return chdbAvailable() ? null : 'the embedded ClickHouse engine is not installed (npm install --no-save chdb@3.4.0)';
}

/**
 * One engine per test process: the embedded engine binds one data directory per process, and
 * every test server of the process shares it (`:memory:`, a temporary directory kept while a
 * connection is open). Tests never see each other's rows: every query names its workspace or experiment.
 */
export const TEST_CLICKHOUSE: ClickHouseConfig = { kind: 'embedded', path: ':memory:', cluster: null };
