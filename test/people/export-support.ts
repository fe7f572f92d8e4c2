import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Runs the notebook export's script with Debian's SciPy on the export; returns its exit status and output. */
export function runNotebook(exported: unknown): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-notebook-'));
  const data = path.join(dir, 'export.json');
  const script = path.join(dir, 'verdict_results.py');
  fs.writeFileSync(data, JSON.stringify(exported));
  fs.writeFileSync(script, (exported as { script: string }).script);
  const run = spawnSync('python3', [script, data], { encoding: 'utf8', timeout: 120_000 });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: run.status, output: run.stdout + run.stderr };
}

/** The CSV's lines split into cells (the exports under test hold no quoted cell). */
export function parseCsv(text: string): string[][] {
  return text
    .trim()
    .split('\r\n')
    .map((line) => line.split(','));
}
