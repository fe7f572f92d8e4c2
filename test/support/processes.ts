// Real `verdict` processes for the tests that start, load, kill and restart them (test/scaled,
// test/events/no-loss, test/foundation/cli*, test/docs): one way to start one, to wait until it
// answers, to stop it and to bootstrap a workspace through the CLI.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { freePort } from './net.js';

export { freePort };

/** `node bin/verdict.js <args>` with `env` over this process's environment; by default only its stderr is shown. */
export function spawnVerdict(args: string[], env: Record<string, string>, options: Omit<SpawnOptions, 'env'> = {}): ChildProcess {
  return spawn(process.execPath, ['bin/verdict.js', ...args], { stdio: ['ignore', 'ignore', 'inherit'], ...options, env: { ...process.env, ...env } });
}

/** Polls `probe` every 100 ms until it returns something truthy; fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | false | undefined | null>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the process answers GET /v1/healthz with 200; fails at once, with its output, if it exits first. */
export async function waitHealthy(url: string, child: ChildProcess, options: { timeoutMs?: number; output?: () => string } = {}): Promise<void> {
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`the verdict process exited with ${child.exitCode}${options.output ? `: ${options.output()}` : ''}`);
      return (await fetch(`${url}/v1/healthz`).catch(() => null))?.ok;
    },
    options.timeoutMs ?? 60_000,
    `${url} answering`,
  );
}

/** `verdict serve` as a real child process, the way an operator runs it, once it answers on $PORT; killed if it never does. */
export async function startServe(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawnVerdict(['serve'], env, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  try {
    // Up to 180 s: on a loaded machine a start-up (the embedded ClickHouse engine's above all) took over 60 s.
    await waitHealthy(`http://127.0.0.1:${env.PORT ?? ''}`, child, { output: () => stderr, timeoutMs: 180_000 });
  } catch (error) {
    child.kill('SIGKILL'); // one that never answered is not left running
    throw error;
  }
  return child;
}

/** Sends `signal` and waits for the exit; nothing when the process has already ended. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** `verdict workspaces create --json`, the operator's bootstrap: the printed workspace, environment, server key and webhook secret. */
export function createWorkspaceWithCli(env: Record<string, string>, name: string) {
  const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', name, '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(`verdict workspaces create failed: ${created.stderr}`);
  const parsed = JSON.parse(created.stdout);
  return {
    key: parsed.api_key.key as string,
    workspaceId: parsed.workspace.id as string,
    environmentId: parsed.environment.id as string,
    webhookSecret: parsed.webhook_secret as string,
  };
}
