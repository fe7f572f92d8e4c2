// Marked's inline tokens as styled runs of plain text, shared by the text and pdf formats.
import type { Token, Tokens } from 'marked';

export interface Run {
  text: string;
  bold?: boolean;
  italic?: boolean;
  code?: boolean;
  strike?: boolean;
  link?: string;
}

type Style = Omit<Run, 'text'>;

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  hellip: '\u2026',
  mdash: '\u2014',
  ndash: '\u2013',
  euro: '\u20ac',
  laquo: '\u00ab',
  raquo: '\u00bb',
};

/** Markdown keeps entities of the source as written; text and pdf want the characters. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity: string, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/** Text of raw HTML: tags dropped, line breaks kept where the markup breaks lines. */
export function htmlToText(html: string): string {
  return decodeEntities(
    html
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/(p|div|h[1-6]|li|tr|table|ul|ol|blockquote)>/gi, '\n')
      .replace(/<[^>]*>/g, ''),
  );
}

function push(runs: Run[], text: string, style: Style): void {
  if (text !== '') runs.push({ ...style, text });
}

function inlineRuns(token: Token, style: Style, runs: Run[]): void {
  switch (token.type) {
    case 'strong':
    case 'em':
    case 'del': {
      const key = token.type === 'strong' ? 'bold' : token.type === 'em' ? 'italic' : 'strike';
      for (const inner of (token as Tokens.Strong).tokens) inlineRuns(inner, { ...style, [key]: true }, runs);
      return;
    }
    case 'link': {
      const link = token as Tokens.Link;
      for (const inner of link.tokens) inlineRuns(inner, { ...style, link: link.href }, runs);
      return;
    }
    case 'codespan':
      return push(runs, decodeEntities((token as Tokens.Codespan).text), { ...style, code: true });
    case 'image':
      return push(runs, decodeEntities((token as Tokens.Image).text), style);
    case 'br':
      return push(runs, '\n', style);
    case 'html':
      return push(runs, htmlToText((token as Tokens.HTML).text), style);
    case 'checkbox':
      return push(runs, (token as Tokens.Checkbox).checked ? '[x] ' : '[ ] ', style);
    case 'text': {
      const text = token as Tokens.Text;
      if (text.tokens) for (const inner of text.tokens) inlineRuns(inner, style, runs);
      else push(runs, decodeEntities(text.text), style);
      return;
    }
    default:
      // escape and any other leaf: its text is what the reader sees.
      return push(runs, decodeEntities('text' in token && typeof token.text === 'string' ? token.text : ''), style);
  }
}

export function toRuns(tokens: Token[] | undefined, style: Style = {}): Run[] {
  const runs: Run[] = [];
  for (const token of tokens ?? []) inlineRuns(token, style, runs);
  return runs;
}

export function runsText(runs: Run[]): string {
  return runs.map((run) => run.text).join('');
}
