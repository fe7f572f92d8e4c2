import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/processes.js';

/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary folder, on a free port), so a
 * fault test can stop and restart it without disturbing the machine's shared server. PostgreSQL
 * refuses to run as root, so when the test runs as root the cluster runs as the postgres user.
 */
export interface PrivatePostgres {
  url: string;
  /** The postmaster's process id (every server process is its child). */
  pid(): number;
  stop(): void;
  start(): void;
  restart(): void;
  destroy(): void;
}

function findBin(name: string): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  for (const version of fs.readdirSync(root).sort().reverse()) {
    const candidate = path.join(root, version, 'bin', name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

export function privatePostgresAvailable(): boolean {
  return findBin('initdb') !== null && findBin('pg_ctl') !== null;
}

/** `settings` are the server's -c options beyond its port and socket (the fault tests' default: fsync off). */
export async function startPrivatePostgres(settings: readonly string[] = ['fsync=off']): Promise<PrivatePostgres> {
  const initdb = findBin('initdb') as string;
  const pgCtl = findBin('pg_ctl') as string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-pg-'));
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  fs.chmodSync(dir, 0o700);
  const run = (bin: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'ignore' }) : execFileSync(bin, args, { stdio: 'ignore' });
  const data = path.join(dir, 'data');
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', 'mkdir', data]);
  else fs.mkdirSync(data);
  run(initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, ...settings.map((setting) => `-c ${setting}`)].join(' ');
  const start = () => run(pgCtl, ['-D', data, '-o', options, '-w', '-l', path.join(dir, 'log'), 'start']);
  const stop = () => run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid: () => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    start,
    stop,
    restart: () => run(pgCtl, ['-D', data, '-o', options, '-m', 'fast', '-w', '-l', path.join(dir, 'log'), 'restart']),
    destroy: () => {
      try {
        stop();
      } catch {
        // already stopped
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
