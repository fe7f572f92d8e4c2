import { ManualClock } from '../../support/clock.js';
import { CONFORMANCE_CASES } from './cases.js';
import { describeConformance } from './harness.js';

/**
 * One conformance suite for every analysis store: each case of cases.ts played on SQLite,
 * PostgreSQL (VERDICT_TEST_DATABASE_URL) and ClickHouse (the embedded engine), every snapshot in
 * both modes equal to SQLite's full computation.
 */
describeConformance('the analysis stores agree', new ManualClock(0), CONFORMANCE_CASES);
