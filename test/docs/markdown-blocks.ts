import fs from 'node:fs';

/**
 * The shell blocks of a Markdown page, in order, each with the response shown right below it.
 *
 * Conventions (README.md "Docs test"):
 * - ```sh and ```bash blocks run; `<!-- docs-test: skip -->` on the line directly above the
 *   opening fence skips one (a long-running server, Docker, another host).
 * - A ```json or bare ``` block that follows a shell block with only blank lines between is the
 *   response that block prints: it is compared with what the block printed.
 * - A whole-line comment inside a shell block that is JSON (`# {"status":"running"}`) is compared
 *   the same way, in order.
 */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  skip: boolean;
  /** The block shown right below, if any. */
  shown: { lang: string; text: string } | null;
}

interface Fence {
  lang: string;
  line: number;
  text: string;
  /** The line above the opening fence, and whether only blank lines separate it from the fence before. */
  lineAbove: string;
  adjacentToPrevious: boolean;
}

const SKIP_MARK = '<!-- docs-test: skip -->';

function fencesOf(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const fences: Fence[] = [];
  let lastFenceEnd = -10;
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    const between = lines.slice(lastFenceEnd + 1, start);
    fences.push({
      lang: open[1] ?? '',
      line: start + 1,
      text: body.join('\n'),
      lineAbove: (lines[start - 1] ?? '').trim(),
      adjacentToPrevious: lastFenceEnd >= 0 && between.every((l) => l.trim() === ''),
    });
    lastFenceEnd = i;
  }
  return fences;
}

export function shellBlocksOf(file: string, markdown = fs.readFileSync(file, 'utf8')): ShellBlock[] {
  const fences = fencesOf(markdown);
  const blocks: ShellBlock[] = [];
  fences.forEach((fence, index) => {
    if (fence.lang !== 'sh' && fence.lang !== 'bash') return;
    const next = fences[index + 1];
    const shown = next && next.adjacentToPrevious && (next.lang === 'json' || next.lang === '') ? { lang: next.lang, text: next.text } : null;
    blocks.push({ file, line: fence.line, code: fence.text, skip: fence.lineAbove === SKIP_MARK, shown });
  });
  return blocks;
}
