// The text format: what a reader of the rendered Markdown sees, without its syntax. Lists keep
// their bullets and numbers, tables become aligned columns, links show their address.
import type { Token, Tokens } from 'marked';
import { substitute, type MergedValues } from '../../templates/engine.js';
import { decodeEntities, htmlToText, runsText, toRuns, type Run } from './inline.js';

function plainRuns(runs: Run[], merged: MergedValues): string {
  let out = '';
  for (let i = 0; i < runs.length; i += 1) {
    const run = runs[i] as Run;
    out += run.text;
    const nextLink = runs[i + 1]?.link;
    // A link ends here: name its address unless the text already is the address.
    if (run.link && nextLink !== run.link) {
      const label = runs
        .filter((r) => r.link === run.link)
        .map((r) => r.text)
        .join('');
      const address = run.link.replace(/^mailto:/, '');
      if (substitute(label, merged, (v) => v) !== substitute(address, merged, (v) => v)) out += ` (${address})`;
    }
  }
  return out;
}

function indentLines(text: string, prefix: string, first = prefix): string {
  return text
    .split('\n')
    .map((line, index) => (index === 0 ? first : prefix) + line)
    .join('\n');
}

function listText(list: Tokens.List, merged: MergedValues): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, index) => {
      const marker = list.ordered ? `${start + index}. ` : '- ';
      const content = item.tokens.map((token) => blockText(token, merged)).filter((text) => text !== '');
      return indentLines(content.join(item.loose ? '\n\n' : '\n'), ' '.repeat(marker.length), marker);
    })
    .join(list.loose ? '\n\n' : '\n');
}

function tableText(table: Tokens.Table, merged: MergedValues): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => substitute(plainRuns(toRuns(cell.tokens), merged), merged, (v) => v)));
  const widths = table.header.map((_cell, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  return [line(header ?? []), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

function blockText(token: Token, merged: MergedValues): string {
  switch (token.type) {
    case 'space':
      return '';
    case 'heading':
    case 'paragraph':
    case 'text':
      return plainRuns('tokens' in token && token.tokens ? toRuns(token.tokens) : [{ text: decodeEntities(token.text as string) }], merged);
    case 'list':
      return listText(token as Tokens.List, merged);
    case 'table':
      return tableText(token as Tokens.Table, merged);
    case 'blockquote':
      return indentLines(blocksText((token as Tokens.Blockquote).tokens, merged), '> ');
    case 'code':
      return (token as Tokens.Code).text;
    case 'hr':
      return '----------';
    case 'html':
      return htmlToText((token as Tokens.HTML).text).trim();
    default:
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
  }
}

function blocksText(tokens: Token[], merged: MergedValues): string {
  return tokens
    .map((token) => blockText(token, merged))
    .filter((text) => text !== '')
    .join('\n\n');
}

export function renderText(tokens: Token[], merged: MergedValues): string {
  return `${substitute(blocksText(tokens, merged), merged, (value) => value)}\n`;
}

/** The document's title: its first heading as plain text, or "Document". */
export function documentTitle(tokens: Token[], merged: MergedValues): string {
  const heading = tokens.find((token): token is Tokens.Heading => token.type === 'heading');
  const title = heading ? substitute(runsText(toRuns(heading.tokens)), merged, (value) => value).trim() : '';
  return title === '' ? 'Document' : title.replace(/\s+/g, ' ');
}
