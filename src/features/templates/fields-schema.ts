// Discovers the merge data a Handlebars body reads and describes it as a JSON Schema, frozen
// with each template version and used to reject render data with pointers (see
// docs/templates.md "Drafts and versions").
//
// Semantics (see the tests for each case):
//  - A mustache or block with params or a hash is a helper call: its name is not a field, its
//    path arguments are fields of any type (a helper may take a date, a number or a list).
//    Sub-expressions `(helper ...)` are always calls, even without arguments. A plain `{{name}}`
//    or `{{a.b}}` is a field that is printed: string, number or boolean.
//  - Partials are not fields; a partial's context argument and hash values are fields of any type.
//  - `@data` variables (`@index`, `@key`, `@first`, `@last`) are not fields. `@root.x` is the
//    root field `x`, because that is what Handlebars looks up.
//  - `#each x` makes `x` an array; inside, `this`, `this.y`, bare `y` and the first block param
//    refer to the item (an object when properties are read from it, a printed value for
//    `{{this}}`, anything when unused). `#with x` makes `x` an object and scopes into it. `../`
//    climbs one context per `#each`/`#with`, as Handlebars' depths do; `#if` does not add one.
//  - A field used only under `#if`/`#unless` (condition, program or `{{else}}`), only in an
//    `{{else}}` of `#each`/`#with`, or only inside a block helper we do not know (it may never
//    render its body) is optional and also accepts null. A field used anywhere else is
//    required. A field that is only an `#if` condition accepts any type. Inside `#each`/`#with`
//    requiredness is relative to the item or object; the body itself is not conditional.
//  - A bare block `{{#x}}...{{/x}}` is a Mustache-style section over the field `x` (what
//    Handlebars does when no helper is named `x`): `x` is optional of any type and the body is
//    read, optionally, in the enclosing context, since `x` may be a list, an object or a flag.
//  - Property reads on an array (`items.length`, `items.[0]`) do not change its schema.
//  - The arguments of `default` (`{{default nickname "friend"}}`) are optional and of any type:
//    the helper prints its fallback when the value is missing, null or "".
//  - Literals are never fields. Every object allows additional properties: extra data is fine.
//  - Keys are emitted sorted at every level so that a frozen schema compares byte for byte.
import Handlebars from 'handlebars';
import { parseTemplate } from './syntax.js';

export type JSONSchemaType = 'array' | 'boolean' | 'null' | 'number' | 'object' | 'string';

export interface JSONSchema {
  $schema?: string;
  additionalProperties?: boolean;
  items?: JSONSchema;
  properties?: Record<string, JSONSchema>;
  required?: string[];
  type?: JSONSchemaType | JSONSchemaType[];
}

export const FIELDS_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

type AstNode = hbs.AST.Node;
type Expression = hbs.AST.Expression;
type PathExpression = hbs.AST.PathExpression;
type Call = { path?: AstNode; params: Expression[]; hash?: hbs.AST.Hash };

/** Helpers whose arguments are read only as far as needed: each may be missing, of any type. */
const FALLBACK_HELPERS = new Set(['default']);

interface FieldNode {
  required: boolean;
  printed: boolean;
  scoped: boolean;
  props: Map<string, FieldNode>;
  item: FieldNode | undefined;
}

/** One Handlebars context (root, an `#each` item, a `#with` object); undefined node = unknown. */
interface Frame {
  node: FieldNode | undefined;
  conditional: boolean;
}

interface Scope {
  frames: readonly Frame[];
  /** Block param name -> index of the frame it names, or undefined when it is not data. */
  params: ReadonlyMap<string, number | undefined>;
}

type Usage = 'print' | 'any' | 'condition' | 'iterate' | 'scope';

/** Throws `TemplateSyntaxError` for a body that does not parse. */
export function discoverFieldsSchema(body: string): JSONSchema {
  const ast = parseTemplate(body);
  const root = newNode(true);
  const walker = new Walker(root);
  walker.program(ast, { frames: [{ node: root, conditional: false }], params: new Map() });
  return sortKeys({ $schema: FIELDS_SCHEMA_DIALECT, ...objectSchema(root) }) as JSONSchema;
}

function newNode(required: boolean): FieldNode {
  return { required, printed: false, scoped: false, props: new Map(), item: undefined };
}

class Walker {
  constructor(private readonly root: FieldNode) {}

  program(program: hbs.AST.Program | undefined, scope: Scope): void {
    for (const statement of program?.body ?? []) this.statement(statement, scope);
  }

  private statement(node: AstNode, scope: Scope): void {
    switch (node.type) {
      case 'MustacheStatement':
        return this.mustache(node as hbs.AST.MustacheStatement, scope);
      case 'BlockStatement':
        return this.block(node as hbs.AST.BlockStatement, scope);
      case 'PartialStatement':
      case 'PartialBlockStatement':
        return this.partial(node as hbs.AST.PartialBlockStatement, scope);
      case 'DecoratorBlock':
        // An inline partial renders wherever it is called, possibly never.
        return this.program((node as hbs.AST.DecoratorBlock).program, conditional(scope));
      default:
        // Content, comments and decorators read no merge data.
        return;
    }
  }

  private mustache(node: hbs.AST.MustacheStatement, scope: Scope): void {
    if (isCall(node)) {
      this.callArguments(node, scope);
    } else if (node.path.type === 'PathExpression') {
      this.use(node.path as PathExpression, scope, 'print');
    }
  }

  private block(node: hbs.AST.BlockStatement, scope: Scope): void {
    const name = helperName(node.path);
    if (name === 'if' || name === 'unless') return this.ifBlock(node, scope);
    if (name === 'each') return this.eachBlock(node, scope);
    if (name === 'with') return this.withBlock(node, scope);
    const inner = conditional(scope);
    // With arguments it is a block helper; bare, it is a section over a field.
    if (isCall(node)) this.callArguments(node, scope);
    else if (node.path.type === 'PathExpression') this.use(node.path, scope, 'condition');
    // A block helper's block params are whatever it passes: not merge data we can name.
    this.program(node.program, bindParams(inner, node.program?.blockParams, []));
    this.program(node.inverse, inner);
  }

  private ifBlock(node: hbs.AST.BlockStatement, scope: Scope): void {
    const inner = conditional(scope);
    for (const param of node.params) {
      if (param.type === 'PathExpression') this.use(param as PathExpression, inner, 'condition');
      else this.expression(param, inner);
    }
    this.callArguments({ params: [], hash: node.hash }, inner);
    this.program(node.program, inner);
    this.program(node.inverse, inner);
  }

  private eachBlock(node: hbs.AST.BlockStatement, scope: Scope): void {
    const [target, ...rest] = node.params;
    let item: FieldNode | undefined;
    if (target?.type === 'PathExpression') item = this.use(target as PathExpression, scope, 'iterate');
    else if (target) this.expression(target, scope);
    this.callArguments({ params: rest, hash: node.hash }, scope);
    const inner = pushFrame(scope, item);
    // `as |item index|`: the first names the item, the second is @index or @key.
    this.program(node.program, bindParams(inner, node.program?.blockParams, [inner.frames.length - 1]));
    this.program(node.inverse, conditional(scope));
  }

  private withBlock(node: hbs.AST.BlockStatement, scope: Scope): void {
    const [target, ...rest] = node.params;
    let inner: Scope;
    if (target?.type === 'PathExpression' && isThis(target as PathExpression)) {
      // Same context: Handlebars adds no depth, so `../` keeps its meaning.
      inner = scope;
    } else if (target?.type === 'PathExpression') {
      inner = pushFrame(scope, this.use(target as PathExpression, scope, 'scope'));
    } else {
      if (target) this.expression(target, scope);
      inner = pushFrame(scope, undefined);
    }
    this.callArguments({ params: rest, hash: node.hash }, scope);
    this.program(node.program, bindParams(inner, node.program?.blockParams, [inner.frames.length - 1]));
    this.program(node.inverse, conditional(scope));
  }

  private partial(node: hbs.AST.PartialBlockStatement, scope: Scope): void {
    // The partial's name is not a field, but a dynamic name `(helper args)` reads its args.
    if (node.name.type === 'SubExpression') this.expression(node.name, scope);
    this.callArguments(node, scope);
    // A partial block's body is the fallback or @partial-block: it may never render.
    this.program(node.program, conditional(scope));
  }

  private callArguments(call: Call, scope: Scope): void {
    // `{{default x "fallback"}}` prints the fallback when x is missing: x need not be sent, and
    // the fallback, read only then, need not be either.
    const fallbackHelper = call.path !== undefined && FALLBACK_HELPERS.has(helperName(call.path) ?? '');
    for (const param of call.params) {
      if (fallbackHelper && param.type === 'PathExpression') this.use(param as PathExpression, scope, 'condition');
      else this.expression(param, scope);
    }
    for (const pair of call.hash?.pairs ?? []) this.expression(pair.value, scope);
  }

  private expression(node: Expression, scope: Scope): void {
    if (node.type === 'PathExpression') this.use(node as PathExpression, scope, 'any');
    else if (node.type === 'SubExpression') this.callArguments(node as hbs.AST.SubExpression, scope);
    // Literals are values written in the template, not merge data.
  }

  /** Records one use of a path; returns the node it names (the item node for 'iterate'). */
  private use(path: PathExpression, scope: Scope, usage: Usage): FieldNode | undefined {
    const target = locate(path, scope);
    if (!target?.frame.node) return undefined;
    const required = usage !== 'condition' && !target.frame.conditional;
    let node = target.frame.node;
    for (const key of target.parts) node = child(node, key, required);
    // The root is the data object itself; printing or iterating it says nothing about fields.
    if (node === this.root) return undefined;
    if (usage === 'print') node.printed = true;
    if (usage === 'scope') node.scoped = true;
    if (usage === 'iterate') node.item ??= newNode(true);
    return usage === 'iterate' ? node.item : node;
  }
}

function child(node: FieldNode, key: string, required: boolean): FieldNode {
  let next = node.props.get(key);
  if (next === undefined) {
    next = newNode(false);
    node.props.set(key, next);
  }
  if (required) next.required = true;
  return next;
}

/** The frame a path is read from and the keys below it, mirroring Handlebars' lookup order. */
function locate(path: PathExpression, scope: Scope): { frame: Frame; parts: string[] } | undefined {
  const [first, ...rest] = path.parts;
  if (path.data) {
    const root = scope.frames[0];
    return first === 'root' && path.depth === 0 && root ? { frame: root, parts: rest } : undefined;
  }
  if (first !== undefined && path.depth === 0 && !isScoped(path) && scope.params.has(first)) {
    const index = scope.params.get(first);
    const frame = index === undefined ? undefined : scope.frames[index];
    return frame && { frame, parts: rest };
  }
  // `../` beyond the root resolves to nothing in Handlebars, so it is no field either.
  const frame = scope.frames[scope.frames.length - 1 - path.depth];
  return frame && { frame, parts: path.parts };
}

function isCall(node: Call): boolean {
  return node.params.length > 0 || (node.hash?.pairs.length ?? 0) > 0;
}

/** Handlebars' `AST.helpers.scopedId` (`./x`, `this.x`), which its typings misname `scopeId`. */
function isScoped(path: PathExpression): boolean {
  return /^\.|this\b/.test(path.original);
}

function isThis(path: PathExpression): boolean {
  return !path.data && path.depth === 0 && path.parts.length === 0;
}

/** The name a block would call as a helper (`if`, `each`), or undefined for other paths. */
function helperName(path: AstNode): string | undefined {
  if (path.type !== 'PathExpression') return undefined;
  const expression = path as PathExpression;
  return Handlebars.AST.helpers.simpleId(expression) ? expression.parts[0] : undefined;
}

function conditional(scope: Scope): Scope {
  return { ...scope, frames: scope.frames.map((frame) => ({ ...frame, conditional: true })) };
}

function pushFrame(scope: Scope, node: FieldNode | undefined): Scope {
  return { ...scope, frames: [...scope.frames, { node, conditional: false }] };
}

/** Binds block param names, in order, to frame indexes; extra names are not data. */
function bindParams(scope: Scope, names: string[] | undefined, frames: number[]): Scope {
  if (!names || names.length === 0) return scope;
  const params = new Map(scope.params);
  names.forEach((name, index) => params.set(name, frames[index]));
  return { ...scope, params };
}

const VALUE_TYPES: JSONSchemaType[] = ['string', 'number', 'boolean'];

function nodeSchema(node: FieldNode, nullable: boolean): JSONSchema {
  if (node.item) {
    return withNull({ type: 'array', items: nodeSchema(node.item, false) }, nullable);
  }
  if (node.scoped || node.props.size > 0) return withNull(objectSchema(node), nullable);
  if (node.printed) return { type: nullable ? [...VALUE_TYPES, 'null'] : [...VALUE_TYPES] };
  return {};
}

function objectSchema(node: FieldNode): JSONSchema {
  const keys = [...node.props.keys()].sort();
  // fromEntries defines own properties, so a field named "__proto__" stays a plain key.
  const properties = Object.fromEntries(
    keys.map((key) => {
      const field = node.props.get(key) as FieldNode;
      return [key, nodeSchema(field, !field.required)];
    }),
  );
  const required = keys.filter((key) => node.props.get(key)?.required);
  const schema: JSONSchema = { type: 'object', properties, additionalProperties: true };
  if (required.length > 0) schema.required = required;
  return schema;
}

function withNull(schema: JSONSchema, nullable: boolean): JSONSchema {
  if (!nullable || typeof schema.type !== 'string') return schema;
  return { ...schema, type: [schema.type, 'null'] };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, inner]) => [key, sortKeys(inner)]));
}
