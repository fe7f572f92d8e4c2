import { afterAll, beforeAll } from 'vitest';
import type { DialectName } from './databases.js';
import { describe } from 'vitest';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from './clickhouse.js';
import { describeEach } from './describe-each.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

/**
 * Runs the same suite against every database (see describeEach), each with its own server. The
 * getter returns the server once `beforeAll` has started it.
 */
export function describeEachDialect(name: string, suite: (server: () => TestServer, dialect: DialectName) => void, options: TestServerOptions = {}): void {
  describeEach(name, {}, ({ dialect }) => {
    let server: TestServer | undefined;
    beforeAll(async () => {
      server = await startTestServer(dialect, options);
    });
    afterAll(async () => {
      await server?.close();
    });
    suite(() => {
      if (!server) throw new Error('the test server has not started');
      return server;
    }, dialect);
  });
}

/**
 * describeEachDialect, plus the same suite with events and analysis in ClickHouse (the embedded
 * engine, beside SQLite), named "<name> [clickhouse]": skipped with a message where chdb is not
 * installed, except in CI.
 */
export function describeEachStore(name: string, suite: (server: () => TestServer, dialect: DialectName) => void, options: TestServerOptions = {}): void {
  describeEachDialect(name, suite, options);
  const reason = clickhouseUnavailable();
  const label = `${name} [clickhouse]`;
  if (reason) {
    describe.skip(`${label} (skipped: ${reason})`, () => undefined);
    console.warn(`[verdict] ${reason}: the ClickHouse variants are skipped.`);
    return;
  }
  describe(label, () => {
    let server: TestServer | undefined;
    beforeAll(async () => {
      server = await startTestServer('sqlite', { ...options, config: { ...options.config, clickhouse: TEST_CLICKHOUSE } });
    });
    afterAll(async () => {
      await server?.close();
    });
    suite(() => {
      if (!server) throw new Error('the test server has not started');
      return server;
    }, 'sqlite');
  });
}
