import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer, type TestServerOptions } from '../support/server.js';
import { startRenderWorker } from '../templates/support.js';
import { ensureWebBuild, launchBrowser, signIn, type Browser } from './browser-support.js';

/** What the admin UI's browser suites share; filled in by the hooks before the first test runs. */
export interface AdminUi {
  server: TestServer;
  browser: Browser;
  boot: Bootstrap;
  /** The admin UI's address of `path` on the test server. */
  at(path: string): string;
}

/**
 * Registers the set-up of an admin UI suite (call it inside `describe`): a server on a private
 * SQLite database with a bootstrapped workspace, a render worker (the test server runs no jobs of
 * its own; renders need one, as `verdict serve` has), Chromium, and before each test a session
 * signed in with the bootstrap key unless the browser has one already. `options.config` adjusts the
 * server's settings (outbound deliveries to a local receiver, say); `options.clock` gives the
 * server a clock the suite moves (a ManualClock), for results that depend on time; `jobs: false`
 * starts no worker, for a suite that renders nothing and computes its snapshots itself: a worker
 * runs whatever falls due (scheduled snapshots, maintenance; on a moved clock, much) beside them.
 */
export function useAdminUi(options: Pick<TestServerOptions, 'config' | 'clock'> & { jobs?: boolean } = {}): AdminUi {
  const ui = { at: (path: string) => `${ui.server.url}/ui${path}` } as AdminUi;
  let worker: { stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    ensureWebBuild();
    ui.server = await startTestServer('sqlite', options);
    ui.boot = await ui.server.bootstrap('Browser Co');
    if (options.jobs !== false) worker = startRenderWorker(ui.server);
    ui.browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await ui.browser?.close();
    await worker?.stop();
    await ui.server?.close();
  });

  beforeEach(async () => {
    const cookies = await ui.browser.context.cookies();
    if (!cookies.some((c) => c.name === 'verdict_session')) await signIn(ui.browser.page, ui.server.url, ui.boot.key);
  });

  return ui;
}
