/**
 * A progress line for long seeding, on stderr (stdout carries a child's JSON figures): rewritten in
 * place on a terminal, otherwise one line at each tenth so a log stays short.
 */
import type { SeedProgress } from './bench-facts.js';

export function seedProgress(label: string): SeedProgress {
  const started = Date.now();
  let tenths = -1;
  return (done, total) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    const line = `seeding ${label}: ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} (${seconds} s)`;
    if (process.stderr.isTTY) {
      process.stderr.write(`\r${line}\x1b[K${done >= total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((10 * done) / Math.max(1, total));
    if (tenth === tenths) return;
    tenths = tenth;
    process.stderr.write(`${line}\n`);
  };
}
