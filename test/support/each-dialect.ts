import { afterAll, beforeAll } from 'vitest';
import type { DialectName } from './databases.js';
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
