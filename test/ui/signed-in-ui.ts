import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { ensureWebBuild, launchBrowser, signIn, type Browser } from './browser-support.js';

/** A suite's test server, its bootstrapped workspace, and one Chromium signed in to its admin UI. */
export interface SignedInUi {
  server: TestServer;
  boot: Bootstrap;
  browser: Browser;
}

/**
 * Registers a browser suite's set-up (call it inside `describe`): the current web build, a server
 * on a private SQLite database with a workspace named `workspace`, then `prepare` (the suite's
 * metrics and the like, made through the API), then Chromium signed in with the workspace's key;
 * all closed after the suite. One server and one browser for every test of the file.
 */
export function useSignedInUi(workspace: string, prepare: (ui: Omit<SignedInUi, 'browser'>) => Promise<void> = async () => {}): SignedInUi {
  const ui = {} as SignedInUi;
  beforeAll(async () => {
    ensureWebBuild();
    ui.server = await startTestServer('sqlite');
    ui.boot = await ui.server.bootstrap(workspace);
    await prepare(ui);
    ui.browser = await launchBrowser();
    await signIn(ui.browser.page, ui.server.url, ui.boot.key);
  }, 120_000);
  afterAll(async () => {
    await ui.browser?.close();
    await ui.server?.close();
  });
  return ui;
}
