import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { forwardChanges } from '../lib/cluster-change-relay.js';
import { answerMetricsRequests } from '../lib/cluster-metrics.js';
import { EXIT_FLUSH_MS } from '../log-sink.js';
import { RestartBackoff } from './restart-backoff.js';
import { REPEAT_WINDOW_MS } from './shutdown.js';

/** Which of the primary's HTTP processes this is (0 runs the background work); null outside a cluster. */
export function processIndex(): number | null {
  return cluster.isWorker ? Number(process.env.VERDICT_PROCESS_INDEX ?? 0) : null;
}

/** The HTTP processes still running, for the log. */
function running(workers: Map<number, Worker>) {
  return [...workers].map(([index, worker]) => ({ process: index, pid: worker.process.pid }));
}

/** The primary's deadline: the HTTP processes still running are killed, and named. */
function killTheRest(workers: Map<number, Worker>, logger: Logger, shutdownTimeoutMs: number): void {
  logger.error({ still_running: running(workers), timeout_ms: shutdownTimeoutMs }, 'shutdown deadline passed: killing the HTTP processes still running');
  for (const worker of workers.values()) worker.process.kill('SIGKILL');
  process.exit(1);
}

/** A second signal: each HTTP process gets it too (and exits at once), and so does the primary. */
function passOnAndExit(signal: NodeJS.Signals, workers: Map<number, Worker>, logger: Logger): void {
  logger.warn({ signal, still_running: running(workers) }, 'second signal during shutdown: passing it on and exiting now');
  for (const worker of workers.values()) worker.process.kill(signal);
  process.exit(1);
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
 *
 * Its stop is bounded too: each HTTP process has `shutdownTimeoutMs` (and its log's exit flush);
 * one still running a little after that is killed, named in the log, and the primary exits 1. A
 * second SIGTERM/SIGINT is passed on (each process then exits at once) and the primary exits 1.
 */
export function runPrimary(processes: number, logger: Logger, shutdownTimeoutMs: number): void {
  const workers = new Map<number, Worker>();
  let stopping = false;
  let stoppedAt = 0;
  let failed = false;
  let anyListened = false;

  const stopAll = (): void => {
    stopping = true;
    stoppedAt = performance.now();
    if (workers.size === 0) process.exit(failed ? 1 : 0);
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
    setTimeout(() => killTheRest(workers, logger, shutdownTimeoutMs), shutdownTimeoutMs + EXIT_FLUSH_MS + 1_000);
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
    // The same request delivered twice (the process group and a parent) is not a second one.
    if (stopping && performance.now() - stoppedAt < REPEAT_WINDOW_MS) return;
    if (stopping) return passOnAndExit(signal, workers, logger);
    logger.info({ signal, processes: workers.size, timeout_ms: shutdownTimeoutMs }, 'shutting down the HTTP processes');
    stopAll();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
