// The statistics thread (stats-thread.ts). Plain JavaScript because worker threads do not inherit
// the tsx loader the main thread registers (bin/verdict.js): this one registers it for itself,
// then loads the tasks. Messages that arrive while it loads wait for it.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { niceThisThread } from '../../../../lib/nice-thread.js';

niceThisThread();
register();
const loaded = import('./stats-tasks.ts');

parentPort.on('message', async ({ id, task, input }) => {
  try {
    const { isStatsTask, runStatsTask } = await loaded;
    if (!isStatsTask(task)) throw new Error(`unknown statistics task ${String(task)}`);
    parentPort.postMessage({ id, output: await runStatsTask(task, input) });
  } catch (error) {
    parentPort.postMessage({ id, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) } });
  }
});
