import fs from 'node:fs';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/ID/stat). */
export function threadNiceValues(): number[] {
  return fs.readdirSync('/proc/self/task').map((task) => {
    const stat = fs.readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}
