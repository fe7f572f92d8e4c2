// How SQLite's checkpoint schedule changes a writer's commit times while a long reader holds the
// WAL open (docs/events.md "Checkpoints"): the writer thread's case during a snapshot, whose read
// threads keep the WAL from starting over. `auto` is SQLite's own rule (a checkpoint inside
// whichever commit finds the WAL past 1,000 pages); `spaced` is the writer thread's (none inside
// commits, a PASSIVE one between them at most every --spacing ms). Rounds alternate the two on
// fresh files; each prints commit p50/p99/max, the checkpoints' longest, and the WAL's size.
// Run: npm run bench:checkpoints -- --rounds 3
import BetterSqlite3 from 'better-sqlite3';
import { Command } from 'commander';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Schedule = 'auto' | 'spaced';

interface Round {
  commits: number[];
  checkpoints: number[];
  walBytes: number;
}

function writerAndReader(file: string): { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database; commit: (rows: number) => void } {
  const writer = new BetterSqlite3(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = FULL');
  writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, v TEXT); CREATE INDEX t_k ON t (k);');
  const insert = writer.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  const commit = writer.transaction((rows: number) => {
    for (let i = 0; i < rows; i += 1) insert.run(Math.random().toString(36), 'x'.repeat(200));
  });
  commit(200_000);
  writer.pragma('wal_checkpoint(TRUNCATE)');
  return { writer, reader: new BetterSqlite3(file, { readonly: true }), commit };
}

function runRound(schedule: Schedule, spacingMs: number, seconds: number): Round {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-checkpoints-'));
  const file = path.join(dir, 'db.sqlite');
  const { writer, reader, commit } = writerAndReader(file);
  if (schedule === 'spaced') writer.pragma('wal_autocheckpoint = 0');
  const scan = reader.prepare('SELECT k, v FROM t ORDER BY k');
  let rows = scan.iterate();
  const round: Round = { commits: [], checkpoints: [], walBytes: 0 };
  let lastCheckpoint = 0;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    // The reader moves on a little between commits and now and then starts a new read
    // transaction, as a snapshot's chunks do.
    for (let i = 0; i < 500; i += 1) if (rows.next().done) rows = scan.iterate();
    if (Math.random() < 0.02) {
      rows.return?.();
      rows = scan.iterate();
    }
    const started = performance.now();
    commit(30);
    round.commits.push(performance.now() - started);
    if (schedule === 'spaced' && started - lastCheckpoint >= spacingMs) {
      lastCheckpoint = started;
      const checkpointStarted = performance.now();
      writer.pragma('wal_checkpoint(PASSIVE)');
      round.checkpoints.push(performance.now() - checkpointStarted);
    }
  }
  rows.return?.();
  round.walBytes = fs.statSync(`${file}-wal`).size;
  reader.close();
  writer.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return round;
}

function describe(schedule: Schedule, round: Round): string {
  const sorted = [...round.commits].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.floor(q * (sorted.length - 1))] ?? 0).toFixed(1);
  const checkpoint = round.checkpoints.length ? Math.max(...round.checkpoints).toFixed(1) : '-';
  return `${schedule.padEnd(6)} | ${String(sorted.length).padStart(7)} | ${at(0.5).padStart(5)} / ${at(0.99).padStart(5)} / ${at(1).padStart(6)} | ${String(round.checkpoints.length).padStart(3)}, longest ${checkpoint.padStart(5)} | ${(round.walBytes / 1e6).toFixed(0).padStart(4)}`;
}

new Command()
  .option('--rounds <n>', 'rounds of each schedule, alternated', '3')
  .option('--seconds <n>', 'length of each round', '8')
  .option('--spacing <ms>', "the spaced schedule's least time between checkpoints", '250')
  .action((options: { rounds: string; seconds: string; spacing: string }) => {
    console.log(`bench:checkpoints: ${options.rounds} rounds of ${options.seconds} s each; spaced = a PASSIVE checkpoint at most every ${options.spacing} ms`);
    console.log('schedule | commits | commit p50 / p99 / max ms | checkpoints | WAL MB');
    for (let round = 0; round < Number(options.rounds); round += 1) {
      for (const schedule of ['auto', 'spaced'] as const) console.log(describe(schedule, runRound(schedule, Number(options.spacing), Number(options.seconds))));
    }
  })
  .parse();
