import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { insertEvents } from '../../src/features/events/store.js';
import type { TestServer } from '../support/server.js';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'ui');

/** Debian's Chromium, as CI installs it; never a downloaded browser build. */
export function chromiumAvailable(): boolean {
  const present = fs.existsSync(CHROMIUM);
  if (!present) console.warn(`\n[verdict] ${CHROMIUM} is absent: the browser tests are skipped (apt-get install -y chromium; .ci/run installs it).\n`);
  return present;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds web/dist when it is missing or older than web/src, so the tests see the current UI. */
export function ensureWebBuild(): void {
  const index = path.join(ROOT, 'web', 'dist', 'index.html');
  const stale = !fs.existsSync(index) || fs.statSync(index).mtimeMs < newestMtime(path.join(ROOT, 'web', 'src'));
  if (stale) execFileSync(process.execPath, [path.join(ROOT, 'web', 'build.mjs')], { stdio: 'inherit' });
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in to the admin UI with a server key and waits for the experiments list. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/ui/`);
  await page.getByLabel('Server API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Experiments' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Moves buffered events into the events table now (what the background drainer does). */
async function drain(server: TestServer): Promise<void> {
  for (;;) {
    const { more } = await server.ctx.buffer.drain(insertEvents, 5_000);
    if (!more && (await server.ctx.buffer.status()).pending === 0) return;
  }
}

/**
 * Assigns `count` new units (each assignment logs its exposure) and converts a share of each
 * variant's units, so the treatment clearly converts more often than the control.
 */
export async function sendTraffic(server: TestServer, key: string, experimentKey: string, from: number, count: number): Promise<void> {
  const conversions: { event_key: string; unit_id: string }[] = [];
  for (let start = from; start < from + count; start += 50) {
    const ids = Array.from({ length: Math.min(50, from + count - start) }, (_, i) => `unit-${start + i}`);
    const answers = await Promise.all(ids.map((unit_id) => server.request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id } })));
    answers.forEach((answer, i) => {
      if (answer.status !== 200) throw new Error(`assign: ${answer.status} ${answer.text}`);
      const n = start + i;
      const converts = answer.body.variant === 'control' ? n % 10 === 0 : n % 4 === 0;
      if (converts) conversions.push({ event_key: 'purchase', unit_id: ids[i] as string });
    });
  }
  for (let start = 0; start < conversions.length; start += 500) {
    const sent = await server.request('POST', '/v1/events/batch', { key, body: { events: conversions.slice(start, start + 500) } });
    if (sent.status !== 202) throw new Error(`events: ${sent.status} ${sent.text}`);
  }
  await drain(server);
}
