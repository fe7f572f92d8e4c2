// The markdown format: the body's Markdown as rendered, with merge values escaped so that a
// value reads as the same literal text in any Markdown renderer.
import { substitute, type ExecutedTemplate } from '../../templates/engine.js';
import { addressValue, isAllowedAddress } from './urls.js';

// Characters with an inline meaning anywhere in a line (emphasis, code, links, raw HTML, tables,
// strikethrough, backslash escapes themselves).
const INLINE_SPECIAL = /[\\`*_[\]<>|~]/g;
// An entity reference would be decoded by the renderer; escaping its ampersand keeps it literal.
const ENTITY = /&(?=#?[0-9a-z]+;)/gi;
// Characters that start a block (heading, list, quote, setext underline, ordered list) when they
// begin a line.
const BLOCK_START = /^(\s*)([#+\-=>]|\d+(?=[.)]))/;

/** `# x` becomes `\# x`, `- x` becomes `\- x` and `12. x` becomes `12\. x`. */
function escapeLineStart(line: string): string {
  return line.replace(BLOCK_START, (_match, space: string, marker: string) => (/^\d/.test(marker) ? `${space}${marker}\\` : `${space}\\${marker}`));
}

/** Escapes a value for the position it lands at; `atLineStart` when only blanks precede it on its line. */
export function escapeMarkdown(value: string, atLineStart: boolean): string {
  const inline = value.replace(INLINE_SPECIAL, '\\$&').replace(ENTITY, '\\&');
  const lines = inline.split('\n');
  return lines.map((line, index) => (index > 0 || atLineStart ? escapeLineStart(line) : line)).join('\n');
}

// Only blanks and container markers (quote, bullet, number) before it on its line: a value
// there could open a block of its own.
const LINE_PREFIX = /^(\s*(>|[-*+]|\d+[.)])?)*\s*$/;
// An inline link's destination is open: `](` and no closing parenthesis or blank since.
const LINK_DESTINATION = /\]\(([^()\s]*)$/;
// A link reference definition's destination is open: `[label]: ` at the line start.
const DEFINITION_DESTINATION = /^ {0,3}\[[^\]]+\]:[ \t]*([^\s]*)$/;
// An autolink is open: `<` and no blank or closing `>` since (`<{{url}}>`).
const AUTOLINK = /<([^<>\s]*)$/;

function linePrefix(source: string, offset: number): string {
  return source.slice(source.lastIndexOf('\n', offset - 1) + 1, offset);
}

/**
 * A value in an address (a link or definition destination) is percent-encoded and, with the
 * address so far, must pass the address policy; one that would open an autolink with a refused
 * scheme (`<javascript:...>`) is replaced too. Anywhere else it is escaped as literal text.
 */
function escapeAt(source: string, offset: number, value: string, resolve: (text: string) => string): string {
  const prefix = linePrefix(source, offset);
  const destination = LINK_DESTINATION.exec(prefix) ?? DEFINITION_DESTINATION.exec(prefix);
  if (destination) return addressValue(resolve(destination[1] ?? ''), value);
  const autolink = AUTOLINK.exec(prefix);
  if (autolink && !isAllowedAddress(resolve(autolink[1] ?? '') + value)) return '#';
  return escapeMarkdown(value, LINE_PREFIX.test(prefix));
}

export function renderMarkdown(executed: ExecutedTemplate): string {
  const { merged } = executed;
  const resolve = (text: string) => text.replace(merged.placeholder, (_match, index: string) => merged.values[Number(index)] ?? '');
  return substitute(executed.source, merged, (value, offset) => escapeAt(executed.source, offset, value, resolve));
}
