// Syntax check for Handlebars template bodies, with a 1-based line and column for the editor.
//
// Handlebars 4.7 reports errors in two shapes, both verified against 4.7.10:
//  - AST/compile errors are `Handlebars.Exception`s carrying `lineNumber` (1-based) and `column`
//    (0-based), with " - line:column" appended to the message ("each doesn't match with - 1:3").
//  - Parser (jison) errors are plain `Error`s: the parser's location hash is dropped by its
//    `parseError`, so only the text survives: "Parse error on line N:\n<excerpt>\n----^\nExpecting
//    ..., got 'X'". The excerpt is up to 20 characters before the offending token (newlines removed,
//    "..." when cut) followed by up to 20 after it; the caret marks the token. We recover the column
//    by finding the offset in the source whose surroundings render to that same excerpt.
import Handlebars from 'handlebars';

export type TemplateSyntaxResult = { ok: true } | { ok: false; message: string; line: number; column: number };

/** A template body that Handlebars rejects; `line` and `column` are 1-based. */
export class TemplateSyntaxError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(message: string, line: number, column: number) {
    super(message);
    this.name = 'TemplateSyntaxError';
    this.line = line;
    this.column = column;
  }
}

/**
 * Parses a body into the Handlebars AST, throwing `TemplateSyntaxError` with a location.
 * The AST is also compiled (to a JS source string that is never evaluated) because some
 * errors, such as a partial with two context arguments, only surface in the compiler and
 * would otherwise pass the check and fail at render time.
 */
export function parseTemplate(body: string): hbs.AST.Program {
  let ast: hbs.AST.Program;
  try {
    ast = Handlebars.parse(body);
    Handlebars.precompile(body);
  } catch (error) {
    throw toSyntaxError(error, body);
  }
  return ast;
}

export function checkTemplateSyntax(body: string): TemplateSyntaxResult {
  try {
    parseTemplate(body);
    return { ok: true };
  } catch (error) {
    if (error instanceof TemplateSyntaxError) {
      return { ok: false, message: error.message, line: error.line, column: error.column };
    }
    throw error;
  }
}

function toSyntaxError(error: unknown, body: string): TemplateSyntaxError {
  if (!(error instanceof Error)) {
    return new TemplateSyntaxError(String(error), 1, 1);
  }
  const exception = error as Error & { lineNumber?: unknown; column?: unknown };
  if (typeof exception.lineNumber === 'number' && typeof exception.column === 'number') {
    // The location is returned separately, so drop Handlebars' " - line:column" suffix.
    const message = error.message.replace(/ - \d+:\d+$/, '');
    return new TemplateSyntaxError(message, exception.lineNumber, exception.column + 1);
  }
  return fromParserMessage(error.message, body);
}

const PARSER_MESSAGE = /^(Parse error|Lexical error) on line (\d+)[:.]/;

function fromParserMessage(text: string, body: string): TemplateSyntaxError {
  const lines = text.split('\n');
  const head = PARSER_MESSAGE.exec(lines[0] ?? '');
  if (!head) {
    return new TemplateSyntaxError(text, 1, 1);
  }
  const line = Number(head[2]);
  const excerpt = lines[1] ?? '';
  const caret = (lines[2] ?? '').indexOf('^');
  const detail = lines.slice(3).join(' ').trim();
  const message = detail === '' ? `${head[1]}: unrecognized text` : `${head[1]}: ${detail}`;
  if (caret < 0) {
    return new TemplateSyntaxError(message, line, 1);
  }
  const offset = locateExcerpt(body, excerpt.slice(0, caret), excerpt.slice(caret), line);
  if (offset === undefined) {
    return new TemplateSyntaxError(message, line, 1);
  }
  const position = positionOf(body, offset);
  return new TemplateSyntaxError(message, position.line, position.column);
}

// Line breaks as the Handlebars lexer counts them (it increments its line on each match).
const LINE_BREAK = /\r\n?|\n/g;

/** Mirrors the lexer's `pastInput()` for an offending token that starts at `offset`. */
function pastInput(body: string, offset: number): string {
  const past = body.slice(Math.max(0, offset - 20), offset);
  return (offset > 20 ? '...' : '') + past.replace(/\n/g, '');
}

/**
 * Offset of the offending token: the candidates whose past and upcoming text render as the
 * excerpt, preferring one on the reported line (the lexer reports the line where the token
 * ends, which is the line it starts on unless the token spans lines) and else the last earlier.
 * A `{{!-- --}}` comment corrupts the lexer's record of past input (its `unput` drops one
 * character where it should drop five), so when nothing matches exactly we settle for the
 * first offset on the reported line whose upcoming text matches.
 */
function locateExcerpt(body: string, pre: string, upcoming: string, line: number): number | undefined {
  const ahead = upcoming.endsWith('...') && upcoming.length > 20 ? upcoming.slice(0, -3) : upcoming;
  let earlier: number | undefined;
  let sameLine: number | undefined;
  for (let offset = 0; offset <= body.length; offset += 1) {
    if (body.slice(offset, offset + 20).replace(/\n/g, '') !== ahead) continue;
    const at = positionOf(body, offset).line;
    if (pastInput(body, offset) === pre) {
      if (at === line) return offset;
      if (at < line) earlier = offset;
    } else if (at === line && sameLine === undefined) {
      sameLine = offset;
    }
  }
  return earlier ?? sameLine;
}

function positionOf(body: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (const match of body.slice(0, offset).matchAll(LINE_BREAK)) {
    line += 1;
    lineStart = match.index + match[0].length;
  }
  return { line, column: offset - lineStart + 1 };
}
