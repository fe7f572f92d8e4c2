import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocServer, DocShell, repoRoot, type BlockRun } from './doc-shell.js';
import { shellBlocksOf, type ShellBlock } from './markdown-blocks.js';
import { commentedResponses, compareShown } from './shown-response.js';

// Every ```sh / ```bash block of README.md and docs/*.md runs, in page order, against a server
// this test starts (each page in a terminal and a workspace of its own), as a reader would paste
// it. A block fails when it exits non-zero, when one of its curl calls gets a 5xx (or no answer),
// or a 4xx whose code neither the block nor the response shown below it mentions, or when what it
// printed does not match the response the page shows (see markdown-blocks.ts and
// shown-response.ts for the conventions).

const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function where(block: ShellBlock, index: number): string {
  return `${block.file}:${block.line} (shell block ${index + 1} of the page)`;
}

function excerpt(text: string, max = 1500): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max)}\n…` : trimmed;
}

/** Why a block's run does not match the page, or null. */
function judge(block: ShellBlock, run: BlockRun): string | null {
  if (run.exitCode !== 0) return `exited with ${run.exitCode}\n--- stderr\n${excerpt(run.stderr)}\n--- stdout\n${excerpt(run.stdout)}`;
  const mentioned = `${block.code}\n${block.shown?.text ?? ''}`;
  for (const status of run.httpStatuses) {
    if (status === 0 || status >= 500) return `a curl call got HTTP ${status}\n--- stdout\n${excerpt(run.stdout)}`;
    if (status >= 400 && !mentioned.includes(String(status))) {
      return `a curl call got HTTP ${status}, which neither the block nor its shown response mentions\n--- stdout\n${excerpt(run.stdout)}`;
    }
  }
  for (const shown of [commentedResponses(block.code), block.shown?.text ?? ''].filter(Boolean)) {
    const why = compareShown(shown, run.stdout);
    if (why) return `${why}\n--- printed\n${excerpt(run.stdout)}`;
  }
  return null;
}

// Pages run side by side: each has its own directory and workspace, and most of the time goes to waiting.
describe.concurrent('docs: every shell block runs as written', () => {
  const server = new DocServer();
  // Generous: the CI machine may be busy with the rest of the suite.
  beforeAll(() => server.start(), 180_000);
  afterAll(() => server.stop());
  for (const page of pages) {
    const blocks = shellBlocksOf(path.join(repoRoot, page)).map((block) => ({ ...block, file: page }));
    const runnable = blocks.filter((block) => !block.skip);
    if (runnable.length === 0) continue;
    it(
      `${page}: ${runnable.length} block(s) run against the server, each in a new workspace, and print what the page shows`,
      { timeout: 360_000 },
      async () => {
        const shell = new DocShell(server);
        try {
          shell.start();
          for (const [index, block] of blocks.entries()) {
            if (block.skip) continue;
            const why = judge(block, await shell.run(block.code));
            if (why) expect.fail(`${where(block, index)} failed: ${why}\n--- the block\n${block.code}`);
          }
        } finally {
          shell.stop();
        }
      },
    );
  }
});
