// The Handlebars side of rendering: one sandboxed environment, the save-time check of a body,
// and the first stage of every render.
//
// Every escaped mustache (`{{x}}`, `{{formatDate d}}`) is rewritten in the AST into a call of a
// hidden helper that records the value and prints an opaque placeholder made of letters and
// digits. Markdown never reacts to such a word, so the structure of the document comes from the
// body alone; each output format then puts the recorded values back with its own escaping
// (HTML entities for html, backslashes for markdown, nothing for text and pdf). A merge value can
// therefore never inject markup, in any format. Triple-stash `{{{x}}}` inserts the value as
// Markdown source, as Handlebars' "unescaped" means.
import { randomBytes } from 'node:crypto';
import Handlebars from 'handlebars';
import { LRUCache } from 'lru-cache';
import { RenderError, TEMPLATE_HELPERS } from './helpers.js';
import { parseTemplate, TemplateSyntaxError } from './syntax.js';

const MERGE_HELPER = 'verdictMergeValue';

/** Handlebars' own helpers that stay available; `log` is dropped (it writes to the server log). */
const BUILTIN_HELPERS = ['if', 'unless', 'each', 'with', 'lookup'];

const handlebars = Handlebars.create();
handlebars.unregisterHelper('log');
for (const [name, helper] of Object.entries(TEMPLATE_HELPERS)) handlebars.registerHelper(name, helper);

const knownHelpers: Record<string, boolean> = { log: false, [MERGE_HELPER]: true };
for (const name of [...BUILTIN_HELPERS, ...Object.keys(TEMPLATE_HELPERS)]) knownHelpers[name] = true;

/** Unknown helpers are compile errors, so a typo is caught when the body is saved. */
const COMPILE_OPTIONS: CompileOptions = { knownHelpers, knownHelpersOnly: true, strict: false, data: true };

/** The values an escaped mustache printed, by placeholder index, and the placeholder pattern. */
export interface MergedValues {
  values: string[];
  placeholder: RegExp;
}

export interface ExecutedTemplate {
  /** The Markdown source with placeholders where escaped values go. */
  source: string;
  merged: MergedValues;
}

type Statement = hbs.AST.Statement;

function rewriteProgram(program: hbs.AST.Program | undefined): void {
  for (const statement of program?.body ?? []) rewriteStatement(statement);
}

function rewriteStatement(node: Statement): void {
  switch (node.type) {
    case 'MustacheStatement':
      return rewriteMustache(node as hbs.AST.MustacheStatement);
    case 'BlockStatement': {
      const block = node as hbs.AST.BlockStatement;
      rewriteProgram(block.program);
      return rewriteProgram(block.inverse);
    }
    case 'PartialBlockStatement':
    case 'DecoratorBlock':
      return rewriteProgram((node as hbs.AST.PartialBlockStatement).program);
  }
}

function isHelperName(path: hbs.AST.Expression): boolean {
  if (path.type !== 'PathExpression') return false;
  const expression = path as hbs.AST.PathExpression;
  return Handlebars.AST.helpers.simpleId(expression) && knownHelpers[expression.parts[0] ?? ''] === true;
}

/** `{{x}}` becomes `{{merge x}}` and `{{helper a b}}` becomes `{{merge (helper a b)}}`. */
function rewriteMustache(mustache: hbs.AST.MustacheStatement): void {
  if (!mustache.escaped) return;
  const isCall = mustache.params.length > 0 || (mustache.hash?.pairs.length ?? 0) > 0 || isHelperName(mustache.path);
  const value: hbs.AST.Expression = isCall
    ? ({ type: 'SubExpression', path: mustache.path, params: mustache.params, hash: mustache.hash, loc: mustache.loc } as hbs.AST.SubExpression)
    : (mustache.path as hbs.AST.Expression);
  mustache.path = { type: 'PathExpression', data: false, depth: 0, parts: [MERGE_HELPER], original: MERGE_HELPER, loc: mustache.loc } as hbs.AST.PathExpression;
  mustache.params = [value];
  mustache.hash = undefined as unknown as hbs.AST.Hash;
  mustache.escaped = false;
}

/** The rewritten AST, from the unprocessed parse: Handlebars applies whitespace control once, at compile. */
function rewrittenAst(body: string): hbs.AST.Program {
  const ast = Handlebars.parseWithoutProcessing(body);
  rewriteProgram(ast);
  return ast;
}

function locatedError(error: unknown): TemplateSyntaxError {
  const exception = error as Error & { lineNumber?: unknown; column?: unknown };
  const message = (exception.message ?? String(error)).replace(/ - \d+:\d+$/, '');
  const line = typeof exception.lineNumber === 'number' ? exception.lineNumber : 1;
  const column = typeof exception.column === 'number' ? exception.column + 1 : 1;
  return new TemplateSyntaxError(message.replace('You specified knownHelpersOnly, but used the unknown helper', 'unknown helper'), line, column);
}

/**
 * The save-time check: the body parses, calls only known helpers, and uses only partials it
 * defines inline (there is no partial registry) and no other decorators. Throws
 * `TemplateSyntaxError` with a location.
 */
export function checkTemplateBody(body: string): void {
  const ast = parseTemplate(body);
  checkPartials(ast);
  try {
    handlebars.precompile(rewrittenAst(body), COMPILE_OPTIONS);
  } catch (error) {
    throw locatedError(error);
  }
}

interface PartialUse {
  name: string | undefined;
  loc: hbs.AST.SourceLocation;
  hasFallback: boolean;
}

/** Gathers partial calls and inline partial names; any other decorator is refused. */
function collectPartials(program: hbs.AST.Program | undefined, inline: Set<string>, uses: PartialUse[]): void {
  for (const node of program?.body ?? []) {
    if (node.type === 'PartialStatement' || node.type === 'PartialBlockStatement') {
      const partial = node as hbs.AST.PartialBlockStatement;
      const name = partial.name.type === 'SubExpression' ? undefined : (partial.name as { original: unknown }).original;
      uses.push({ name: name === undefined ? undefined : String(name), loc: partial.loc, hasFallback: node.type === 'PartialBlockStatement' });
      if (node.type === 'PartialBlockStatement') collectPartials(partial.program, inline, uses);
    } else if (node.type === 'Decorator' || node.type === 'DecoratorBlock') {
      const decorator = node as hbs.AST.DecoratorBlock;
      if (node.type === 'Decorator' || (decorator.path as hbs.AST.PathExpression).original !== 'inline') {
        throw new TemplateSyntaxError('decorators are not supported, except {{#*inline "name"}} partials', node.loc.start.line, node.loc.start.column + 1);
      }
      const [name] = decorator.params;
      if (name?.type === 'StringLiteral') inline.add((name as hbs.AST.StringLiteral).value);
      collectPartials(decorator.program, inline, uses);
    } else if (node.type === 'BlockStatement') {
      collectPartials((node as hbs.AST.BlockStatement).program, inline, uses);
      collectPartials((node as hbs.AST.BlockStatement).inverse, inline, uses);
    }
  }
}

function checkPartials(ast: hbs.AST.Program): void {
  const inline = new Set<string>(['@partial-block']);
  const uses: PartialUse[] = [];
  collectPartials(ast, inline, uses);
  for (const use of uses) {
    if (use.hasFallback || (use.name !== undefined && inline.has(use.name))) continue;
    const message =
      use.name === undefined
        ? 'dynamic partial names are not supported; call an inline partial by its name'
        : `the partial "${use.name}" is not defined; define it in the body with {{#*inline "${use.name}"}}...{{/inline}}`;
    throw new TemplateSyntaxError(message, use.loc.start.line, use.loc.start.column + 1);
  }
}

// Frozen bodies never change, so a compiled body serves every later render of it.
const compiled = new LRUCache<string, HandlebarsTemplateDelegate>({ max: 200 });

function compile(body: string): HandlebarsTemplateDelegate {
  let template = compiled.get(body);
  if (!template) {
    template = handlebars.compile(rewrittenAst(body), COMPILE_OPTIONS);
    compiled.set(body, template);
  }
  return template;
}

/** Handlebars' own stringification of a printed value (null and undefined print nothing). */
function printed(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/** Runs the body over the data; throws `RenderError` for anything the body or data causes. */
export function executeTemplate(body: string, data: unknown): ExecutedTemplate {
  // Random letters, so neither the body nor a value can forge a placeholder.
  const nonce = `vm${[...randomBytes(10)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('')}`;
  const values: string[] = [];
  const merge = (value: unknown) => `${nonce}${values.push(printed(value)) - 1}x`;
  let source: string;
  try {
    source = compile(body)(data, {
      helpers: { [MERGE_HELPER]: merge },
      allowProtoPropertiesByDefault: false,
      allowProtoMethodsByDefault: false,
    });
  } catch (error) {
    if (error instanceof RenderError) throw error;
    throw new RenderError(error instanceof Error ? error.message : String(error));
  }
  return { source, merged: { values, placeholder: new RegExp(`${nonce}(\\d+)x`, 'g') } };
}

/** Replaces each placeholder in `text` with its value, transformed for the output format. */
export function substitute(text: string, merged: MergedValues, transform: (value: string, offset: number) => string): string {
  return text.replace(merged.placeholder, (_match, index: string, offset: number) => transform(merged.values[Number(index)] ?? '', offset));
}
