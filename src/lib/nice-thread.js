// Lowers the priority of the calling thread (plain JavaScript: worker threads import it without
// the tsx loader). On Linux a thread has its own nice value, and at 10 the kernel gives it about a
// tenth of the CPU time of a thread at 0 when both want a core, so background work (the analysis's
// reads and statistics) takes longer on a busy machine while the API's thread and the event writer
// keep the cores they need, and it still runs at full speed on idle cores (docs/benchmarks.md
// "Latency under sustained load"). /proc/thread-self names this thread's id; elsewhere, or when
// not allowed, the thread keeps the process's priority.
import fs from 'node:fs';
import os from 'node:os';

export const BACKGROUND_NICE = 10;

export function niceThisThread(nice = BACKGROUND_NICE) {
  try {
    const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, nice);
  } catch {
    // not Linux, or not allowed
  }
}
