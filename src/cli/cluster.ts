import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { forwardChanges } from '../lib/cluster-change-relay.js';
import { answerMetricsRequests } from '../lib/cluster-metrics.js';

/** Which of the primary's HTTP processes this is (0 runs the background work); null outside a cluster. */
export function processIndex(): number | null {
  return cluster.isWorker ? Number(process.env.VERDICT_PROCESS_INDEX ?? 0) : null;
}

const RESTART_DELAY_MS = 1_000;

/**
 * The primary of `verdict serve --processes N`: forks N HTTP processes that share the port
 * (Node's cluster hands out connections in turn), relays cache changes between them, starts a
 * process again when one dies after it was serving, and on SIGTERM/SIGINT stops them all
 * gracefully before exiting. A process that dies before it ever listened (a taken port, a bad
 * setting) would only die again, so that stops the whole server with exit code 1.
 */
export function runPrimary(processes: number, logger: Logger): void {
  const workers = new Map<number, Worker>();
  let stopping = false;
  let failed = false;

  const stopAll = (): void => {
    stopping = true;
    if (workers.size === 0) process.exit(failed ? 1 : 0);
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
  };

  const start = (index: number): void => {
    const worker = cluster.fork({ VERDICT_PROCESS_INDEX: String(index) });
    let listening = false;
    workers.set(index, worker);
    forwardChanges(worker, () => workers.values());
    answerMetricsRequests(worker, () => workers.values(), processes);
    worker.once('listening', () => {
      listening = true;
    });
    worker.on('exit', (code, signal) => {
      workers.delete(index);
      if (stopping) {
        if (code !== 0 && code !== null) failed = true;
        if (workers.size === 0) process.exit(failed ? 1 : 0);
        return;
      }
      logger.error({ process: index, pid: worker.process.pid, code, signal }, 'an HTTP process exited');
      if (!listening) {
        failed = true;
        stopAll();
        return;
      }
      setTimeout(() => {
        if (!stopping) start(index);
      }, RESTART_DELAY_MS);
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
