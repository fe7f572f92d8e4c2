import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { forwardChanges } from '../lib/cluster-change-relay.js';
import { answerMetricsRequests } from '../lib/cluster-metrics.js';
import { RestartBackoff } from './restart-backoff.js';

/** Which of the primary's HTTP processes this is (0 runs the background work); null outside a cluster. */
export function processIndex(): number | null {
  return cluster.isWorker ? Number(process.env.VERDICT_PROCESS_INDEX ?? 0) : null;
}

/** What a process of the cluster sends the primary when it cannot start. */
interface StartupFailure {
  verdict: 'startup-failed';
  reason: string;
}

function isStartupFailure(message: unknown): message is StartupFailure {
  return typeof message === 'object' && message !== null && (message as { verdict?: unknown }).verdict === 'startup-failed';
}

/** In a process of a cluster: tells the primary why this process could not start (it then exits). */
export async function reportStartupFailure(error: unknown): Promise<void> {
  if (!cluster.isWorker || !process.send) return;
  const message: StartupFailure = { verdict: 'startup-failed', reason: error instanceof Error ? error.message : String(error) };
  await new Promise<void>((resolve) => process.send?.(message, undefined, {}, () => resolve()));
}

/**
 * The primary of `verdict serve --processes N`: forks N HTTP processes that share the port
 * (Node's cluster hands out connections in turn), relays cache changes between them, starts a
 * process that died again after a backoff (RestartBackoff), and on SIGTERM/SIGINT stops them all
 * gracefully before exiting. Only when no process has ever listened since start (a taken port, a
 * bad setting) would a restart just fail again: then it stops the whole server with exit code 1.
 */
export function runPrimary(processes: number, logger: Logger): void {
  const workers = new Map<number, Worker>();
  let stopping = false;
  let failed = false;
  let anyListened = false;

  const stopAll = (): void => {
    stopping = true;
    if (workers.size === 0) process.exit(failed ? 1 : 0);
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
  };

  const start = (index: number, backoff = new RestartBackoff()): void => {
    const worker = cluster.fork({ VERDICT_PROCESS_INDEX: String(index) });
    let listenedAt: number | null = null;
    let startupFailure: string | undefined;
    workers.set(index, worker);
    forwardChanges(worker, () => workers.values());
    answerMetricsRequests(worker, () => workers.values(), processes);
    worker.on('message', (message: unknown) => {
      if (isStartupFailure(message)) startupFailure = message.reason;
    });
    worker.once('listening', () => {
      listenedAt = Date.now();
      anyListened = true;
    });
    worker.on('exit', (code, signal) => {
      workers.delete(index);
      if (stopping) {
        if (code !== 0 && code !== null) failed = true;
        if (workers.size === 0) process.exit(failed ? 1 : 0);
        return;
      }
      const exit = { process: index, pid: worker.process.pid, code, signal, ...(startupFailure === undefined ? {} : { reason: startupFailure }) };
      if (!anyListened) {
        logger.error(exit, 'no HTTP process has listened since start, so starting them again would only fail again: stopping');
        failed = true;
        stopAll();
        return;
      }
      const delayMs = backoff.next(listenedAt === null ? null : Date.now() - listenedAt);
      logger.error({ ...exit, restart_in_ms: delayMs }, 'an HTTP process exited; starting it again');
      setTimeout(() => {
        if (!stopping) start(index, backoff);
      }, delayMs);
    });
  };

  for (let index = 0; index < processes; index += 1) start(index);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    logger.info({ signal, processes: workers.size }, 'shutting down the HTTP processes');
    stopAll();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
