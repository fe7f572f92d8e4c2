import { describe, expect, it } from 'vitest';
import { TemplateSyntaxError, checkTemplateSyntax, parseTemplate } from './syntax.js';

describe('checkTemplateSyntax', () => {
  it.each([
    ['plain text', 'Hello, world'],
    ['empty body', ''],
    ['fields, helpers and partials', 'Hi {{name}}, {{formatDate at "short"}} {{> footer}}'],
    ['blocks with else chains', '{{#if a}}A{{else if b}}B{{else}}C{{/if}}'],
    ['each with block params', '{{#each items as |item i|}}{{i}}: {{item.name}}{{/each}}'],
    ['comments and raw blocks', '{{!-- a {{ comment }} --}}{{{{raw}}}}{{x}}{{{{/raw}}}}'],
    ['inline partials', '{{#*inline "row"}}<td>{{v}}</td>{{/inline}}{{> row v=1}}'],
  ])('accepts %s', (_name, body) => {
    expect(checkTemplateSyntax(body)).toEqual({ ok: true });
  });

  it('points at the end of input when a block is never closed', () => {
    expect(checkTemplateSyntax('{{#if paid}}Paid')).toEqual({
      ok: false,
      message: "Parse error: Expecting 'OPEN_INVERSE_CHAIN', 'INVERSE', 'OPEN_ENDBLOCK', got 'EOF'",
      line: 1,
      column: 17,
    });
  });

  it('reports 1-based line and column of the offending token on a later line', () => {
    const body = 'x\n\n  {{#each items}}\n {{name}\n{{/each}}';
    const result = checkTemplateSyntax(body);
    // Line 4 is " {{name}": the lone "}" is column 8.
    expect(result).toMatchObject({ ok: false, line: 4, column: 8 });
    expect(result.ok === false && result.message).toMatch(/^Parse error: Expecting .* got 'INVALID'$/);
  });

  it('finds the column on a long line where the excerpt is cut with "..."', () => {
    const body = `${'a'.repeat(57)}\n${'b'.repeat(42)} {{x y=}} ${'b'.repeat(40)}`;
    expect(checkTemplateSyntax(body)).toMatchObject({ ok: false, line: 2, column: 50 });
  });

  it('counts CRLF as one line break', () => {
    expect(checkTemplateSyntax('{{a}}\r\n{{> }}')).toMatchObject({ ok: false, line: 2, column: 5 });
  });

  it('locates an extra closing brace', () => {
    expect(checkTemplateSyntax('{{a}}\n{{a}}\n{{a}}}\n{{a}}')).toMatchObject({ ok: false, line: 3, column: 4 });
  });

  it('locates errors that follow a long comment, whose lexer bookkeeping is off', () => {
    expect(checkTemplateSyntax('{{!-- note --}}\nxx{{a b=}}')).toMatchObject({ ok: false, line: 2, column: 9 });
  });

  it('uses the location Handlebars attaches to mismatched blocks, without the suffix', () => {
    expect(checkTemplateSyntax('ok\n  {{#each items}}{{/with}}')).toEqual({
      ok: false,
      message: "each doesn't match with",
      line: 2,
      column: 6,
    });
  });

  it('reports errors only the compiler sees', () => {
    expect(checkTemplateSyntax('Hi\n{{> footer a b}}')).toEqual({
      ok: false,
      message: 'Unsupported number of partial arguments: 2',
      line: 2,
      column: 1,
    });
  });

  it('reports an unterminated comment as a lexical error', () => {
    expect(checkTemplateSyntax('{{!-- never closed')).toEqual({
      ok: false,
      message: 'Lexical error: unrecognized text',
      line: 1,
      column: 1,
    });
  });

  it('rejects invalid paths', () => {
    expect(checkTemplateSyntax('{{a/../b}}')).toMatchObject({ ok: false, line: 1, column: 3 });
  });
});

describe('parseTemplate', () => {
  it('returns the Handlebars AST', () => {
    expect(parseTemplate('Hi {{name}}').body.map((node) => node.type)).toEqual(['ContentStatement', 'MustacheStatement']);
  });

  it('throws a TemplateSyntaxError with the location', () => {
    let caught: unknown;
    try {
      parseTemplate('{{#if a}}');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TemplateSyntaxError);
    expect(caught).toMatchObject({ name: 'TemplateSyntaxError', line: 1, column: 10 });
  });
});
