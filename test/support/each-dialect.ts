import { afterAll, beforeAll, describe } from 'vitest';
import { testDialects, type DialectName } from './databases.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

/**
 * Runs the same suite against every available database, each with its own server. The getter
 * returns the server once `beforeAll` has started it.
 */
export function describeEachDialect(
  name: string,
  suite: (server: () => TestServer, dialect: DialectName) => void,
  options: TestServerOptions = {},
): void {
  for (const dialect of testDialects()) {
    describe(`${name} [${dialect}]`, () => {
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
}
