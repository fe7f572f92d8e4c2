import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './doc-shell.js';
import { describeOffences, diaryOffences } from './diary-wording.js';

// README.md and docs/*.md describe the product as it is: what it does, how fast, on what machine,
// with the command behind each figure. Dates of runs, numbered stretches of work and who ran what
// beside which other work belong in git's history, not on the page (see diary-wording.ts).

const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('docs: pages describe the product, not the work that made it', () => {
  it.each(pages)('%s has no diary wording', (page) => {
    const offences = diaryOffences(page, fs.readFileSync(path.join(repoRoot, page), 'utf8'));
    expect(describeOffences(offences), 'refused wording, by file and line').toBe('');
  });
});

describe('docs test: what counts as diary wording', () => {
  it.each([
    ['Figures from the 2-core development machine on 2026-11-22, 64 connections.', 'the date of a run'],
    ['**The hour on 7de491d** (`--duration 3600`, 16:13–17:15 UTC, nothing else running)', 'the time of day of a run'],
    ['**Ninth session (2026-11-27): a slower machine.**', '"session" as a stretch of work'],
    ['The sixth session moved those statistics off the API thread.', '"session" as a stretch of work'],
    ['| 7f0e358, previous session | 34eb3bf, this session |', '"session" as a stretch of work'],
    ['The machine was shared with six other sessions running type checks.', '"session" as a stretch of work'],
    ["the runs could not be made in one invocation before the session's deadline", '"session" as a stretch of work'],
    ['A second round of work moved the drain.', 'a "round of work"'],
    ['It took 17 to 23 minutes this week.', 'when something was done'],
    ['Profiled on SQLite (helper "incr") by timing every statement.', 'who ran something'],
    ["load average 4 to 10, beside other helpers' work", 'who ran something'],
    ['with no test, CI or helper running beside it', 'who ran something'],
  ])('refuses %j', (line, why) => {
    const offences = diaryOffences('page.md', `# A page\n\n${line}\n`);
    expect(offences.map((o) => [o.line, o.why])).toContainEqual([3, why]);
    expect(describeOffences(offences)).toContain('page.md:3:');
  });

  it.each([
    'The key is exchanged for a session; the browser never stores the key.',
    'Revoking the key ends its sessions at once, on every process.',
    'Results read through an admin UI session are peeks; the session cookie is HttpOnly.',
    'An expired session answers 401 and the UI shows "Your session expired".',
    'Each session token is stored as its SHA-256, with the key id and the workspace id.',
    'A bare date (`2024-03-01`) is that calendar day in UTC; `formatDate` and other Handlebars helpers.',
    'The run takes 1,000 events per round; a refresh in rounds is exact.',
    'Each helper prints its fallback when the value is missing; no helper writes to the log, and other helpers are refused.',
    '"created_at": "2026-11-24T00:05:24.701Z" in a shown answer is a timestamp, not a run.',
    '```json\n{"signup_at": "2024-01-01"}\n```',
  ])('allows %j', (text) => {
    expect(describeOffences(diaryOffences('page.md', text))).toBe('');
  });
});
