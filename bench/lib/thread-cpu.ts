/**
 * CPU seconds of this process split between its main thread (Verdict's JavaScript: the drain's
 * reads, serialisation and commits) and every other thread (in a process with the embedded
 * ClickHouse engine, mostly the engine's: parsing, writing parts, merging; besides them libuv's
 * and V8's helpers). On a loaded machine events per CPU-second compare runs where wall time
 * cannot. Linux only (/proc); elsewhere the split reads as unknown (NaN).
 */
import fs from 'node:fs';

export interface CpuSplit {
  /** CPU seconds of the whole process (every thread, those that ended too). */
  total: number;
  /** CPU seconds of the main thread. */
  main: number;
  /** The rest: the embedded engine's threads and Node's helpers. */
  others: number;
}

const TICKS_PER_SECOND = 100;

function mainThreadSeconds(): number {
  try {
    // Fields after the command (which may hold spaces, hence after its closing parenthesis): utime is the 12th, stime the 13th.
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Starts counting; the returned function gives the CPU used since. */
export function cpuSince(): () => CpuSplit {
  const process0 = process.cpuUsage();
  const main0 = mainThreadSeconds();
  return () => {
    const used = process.cpuUsage(process0);
    const total = (used.user + used.system) / 1e6;
    const main = mainThreadSeconds() - main0;
    return { total, main, others: total - main };
  };
}
