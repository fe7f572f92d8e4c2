/**
 * The CPU time a local PostgreSQL server has used (Linux /proc): its postmaster's own, that of its
 * children that have exited (backends and parallel workers, once the postmaster has reaped them),
 * and that of its children still running. Measured before and after a computation on a private
 * server (nothing else connects to it), the difference is the computation's server CPU, a figure
 * that other work on a loaded machine inflates far less than wall time.
 */
import fs from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** utime, stime, cutime and cstime of a process, in ticks, and its parent's id; null when it is gone. */
function times(pid: number): { own: number; reaped: number; parent: number } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (index: number) => Number(fields[index]);
  return { parent: field(1), own: field(11) + field(12), reaped: field(13) + field(14) };
}

/** Seconds of CPU used so far by the server whose postmaster is `postmaster`. */
export function serverCpuSeconds(postmaster: number): number {
  const root = times(postmaster);
  if (!root) throw new Error(`no process ${postmaster}`);
  let ticks = root.own + root.reaped;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = times(Number(entry));
    if (child?.parent === postmaster) ticks += child.own + child.reaped;
  }
  return ticks / TICKS;
}
