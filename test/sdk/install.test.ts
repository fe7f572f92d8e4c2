import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestSetup } from '../events/support.js';
import { ROOT, ensureSdkBuild, startExperiment, startSdkServer, storedEventIds } from './support.js';

// The README's promise: `npm pack` of sdk/ gives a tarball an app outside this repository
// installs (offline: the SDK has no runtime dependency), and the README's example, run in that
// app, assigns, tracks and survives an experiment that does not run (404).

/** The README's SDK example: the first ```js block of its "## SDK" section. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## SDK'));
  const match = /```js\n([\s\S]*?)\n```/.exec(section);
  if (!match) throw new Error('README.md: no ```js example in the "## SDK" section');
  return match[1] ?? '';
}

describe('the SDK installs from its npm pack tarball into an app outside the repository', () => {
  let app: string;
  let setup: IngestSetup;

  beforeAll(async () => {
    ensureSdkBuild();
    app = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-sdk-app-'));
    // --ignore-scripts: pack the sdk/dist the install built, without rebuilding it under other tests' feet.
    const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', app], { cwd: path.join(ROOT, 'sdk'), encoding: 'utf8' });
    const [{ filename: tarball }] = JSON.parse(packed) as [{ filename: string }];
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'an-app', version: '1.0.0', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', `./${tarball}`], { cwd: app, encoding: 'utf8' });
    fs.writeFileSync(path.join(app, 'example.mjs'), readmeExample());
    setup = await startSdkServer();
  }, 120_000);

  afterAll(async () => {
    await setup?.server.close();
    if (app) fs.rmSync(app, { recursive: true, force: true });
  });

  /** Runs the example in the app (asynchronously: the server answers from this process). */
  async function runExample(): Promise<{ status: number; stdout: string; stderr: string }> {
    const env = { PATH: process.env.PATH, VERDICT_URL: setup.server.url, VERDICT_KEY: setup.serverKey };
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['example.mjs'], { cwd: app, env, encoding: 'utf8', timeout: 30_000 });
      return { status: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { status: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  }

  it('installs a copy (not a link into the repository) that resolves as @verdict/sdk', () => {
    const installed = path.join(app, 'node_modules', '@verdict', 'sdk');
    expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
    expect(fs.existsSync(path.join(installed, 'dist', 'index.js'))).toBe(true);
    expect(path.relative(ROOT, app).startsWith('..')).toBe(true);
  });

  it('the example answers the control and exits 0 when the experiment does not run (404)', async () => {
    const run = await runExample();
    expect(run.stderr.trim()).toMatch(/^verdict: 404: .*no running experiment with key "checkout-button"$/);
    expect(run.stdout.trim()).toBe('variant: control');
    expect(run.status).toBe(0);
  });

  it('the example prints the stored variant and its event is stored before it exits', async () => {
    await startExperiment(setup, 'checkout-button');
    const before = (await storedEventIds(setup)).length;
    const run = await runExample();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const assigned = await setup.server.request('POST', '/v1/assign', {
      key: setup.serverKey,
      body: { experiment_key: 'checkout-button', unit_id: 'user-42' },
    });
    expect(run.stdout.trim()).toBe(`variant: ${assigned.body.variant}`);
    expect(await storedEventIds(setup)).toHaveLength(before + 1);
  });
});
