import type { Logger } from 'pino';

/** One thing a stop waits for, named for the log line that says what was still running at the deadline. */
export interface StopTask {
  name: string;
  run(): Promise<void>;
}

/** Tasks run one stage after the other; the tasks of a stage at the same time. */
export type StopStage = StopTask[];

/**
 * A repeat of the stop signal this soon after the first is the same request delivered twice, not
 * an operator insisting: a process manager that signals the whole process group reaches this
 * process directly and again through its parent (`npm start` forwards SIGTERM and SIGINT to its
 * child; the primary of `serve --processes N` signals its HTTP processes), within milliseconds.
 */
export const REPEAT_WINDOW_MS = 1_000;

export interface StopOptions {
  /** After this long the process exits with status 1, logging what it was still waiting for. */
  timeoutMs: number;
  /** process.exit; a parameter so a test can watch it. */
  exit?: (code: number) => void;
}

/**
 * On the first SIGTERM or SIGINT: logs `shutting down`, runs the stages, logs `stopped` and
 * exits 0 (1 when a task failed). Every stop ends:
 * - after `timeoutMs` the process logs the tasks still running and exits 1;
 * - a second SIGTERM or SIGINT (more than REPEAT_WINDOW_MS after the first) exits 1 at once.
 */
export function onSignals(stages: StopStage[], logger: Logger, options: StopOptions): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const running = new Set<string>();
  let firstSignalAt: number | null = null;

  const handler = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== null) {
      if (performance.now() - firstSignalAt < REPEAT_WINDOW_MS) return;
      logger.warn({ signal, waiting_for: [...running] }, 'second signal during shutdown: exiting now');
      exit(1);
      return;
    }
    firstSignalAt = performance.now();
    logger.info({ signal, timeout_ms: options.timeoutMs }, 'shutting down');
    // Referenced: while tasks are outstanding it keeps the process up until it fires, rather than
    // letting an emptied event loop end the process silently with status 0.
    const deadline = setTimeout(() => {
      logger.error({ waiting_for: [...running], timeout_ms: options.timeoutMs }, 'shutdown deadline passed: exiting without waiting for the rest');
      exit(1);
    }, options.timeoutMs);
    runStages(stages, running, logger).then(
      (failed) => {
        clearTimeout(deadline);
        if (failed) {
          exit(1);
          return;
        }
        logger.info({ duration_ms: Math.round(performance.now() - (firstSignalAt ?? 0)) }, 'stopped');
        exit(0);
      },
      // runStages catches each task's failure; this is only a guard.
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** Runs the stages in order; a task that fails is logged and the stop goes on. Resolves whether any failed. */
async function runStages(stages: StopStage[], running: Set<string>, logger: Logger): Promise<boolean> {
  let failed = false;
  for (const stage of stages) {
    await Promise.all(
      stage.map(async (task) => {
        running.add(task.name);
        try {
          await task.run();
        } catch (error) {
          failed = true;
          logger.error({ err: error, task: task.name }, 'shutdown failed');
        } finally {
          running.delete(task.name);
        }
      }),
    );
  }
  return failed;
}
