// Generates the SDK's request and response types from openapi.json (`write`), or fails when the
// committed sdk/src/generated/api.ts differs from what openapi.json would give (`check`, run by
// `npm run openapi:check` in CI), so the SDK cannot drift from the API it calls.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const source = path.join(root, 'openapi.json');
const target = path.join(root, 'sdk', 'src', 'generated', 'api.ts');

/** The operations the SDK calls, by operationId; each gives `<Name>Request` and `<Name>Response`. */
const OPERATIONS = ['assign', 'assignBatch', 'logExposure', 'trackEvent', 'trackEventBatch'];

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  /** an array of schemas is a tuple (draft-07 style, as TypeBox's Type.Tuple writes it) */
  items?: Schema | Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  description?: string;
  format?: string;
}

interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

function indent(text: string, depth: number): string {
  return text.replace(/\n/g, `\n${'  '.repeat(depth)}`);
}

function docComment(schema: Schema, depth: number): string {
  const notes = [schema.description, schema.format ? `format: ${schema.format}` : undefined].filter(Boolean);
  if (notes.length === 0) return '';
  return `/** ${notes.join('; ').replace(/\*\//g, '*\\/')} */\n${'  '.repeat(depth)}`;
}

function objectType(schema: Schema, depth: number): string {
  const required = new Set(schema.required ?? []);
  const lines: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
    lines.push(`${docComment(property, depth + 1)}${key}${required.has(name) ? '' : '?'}: ${typeOf(property, depth + 1)};`);
  }
  const extra = schema.additionalProperties;
  if (extra === true || (typeof extra === 'object' && Object.keys(extra).length === 0)) lines.push('[key: string]: unknown;');
  else if (typeof extra === 'object') {
    // An index signature must admit every declared property too.
    const named = Object.keys(schema.properties ?? {}).length > 0;
    lines.push(`[key: string]: ${named ? 'unknown' : typeOf(extra, depth + 1)};`);
  }
  if (lines.length === 0) return 'Record<string, never>';
  const pad = '  '.repeat(depth + 1);
  return `{\n${lines.map((line) => pad + line).join('\n')}\n${'  '.repeat(depth)}}`;
}

function scalar(type: string, schema: Schema, depth: number): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      if (Array.isArray(schema.items)) return `[${schema.items.map((item) => typeOf(item, depth)).join(', ')}]`;
      return `Array<${schema.items ? typeOf(schema.items, depth) : 'unknown'}>`;
    case 'object':
      return objectType(schema, depth);
    default:
      throw new Error(`unsupported JSON Schema type ${type}`);
  }
}

/** The TypeScript type of the JSON Schema subset openapi.json uses; anything else fails loudly. */
export function typeOf(schema: Schema, depth = 0): string {
  if (schema.$ref) return schema.$ref.replace(/^#\/components\/schemas\//, '');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((member) => typeOf(member, depth)).join(' | ');
  if (schema.allOf) return schema.allOf.map((member) => `(${typeOf(member, depth)})`).join(' & ');
  if (Array.isArray(schema.type)) return schema.type.map((type) => scalar(type, schema, depth)).join(' | ');
  if (schema.type) return scalar(schema.type, schema, depth);
  if (schema.properties) return objectType(schema, depth);
  return 'unknown';
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function declaration(name: string, schema: Schema): string {
  return `${docComment(schema, 0)}export type ${name} = ${indent(typeOf(schema), 0)};\n`;
}

function successSchema(operation: Operation): Schema | undefined {
  const status = Object.keys(operation.responses ?? {}).find((code) => code.startsWith('2'));
  return status ? operation.responses?.[status]?.content?.['application/json']?.schema : undefined;
}

export function generate(document: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } }): string {
  const byId = new Map<string, Operation>();
  for (const methods of Object.values(document.paths))
    for (const operation of Object.values(methods)) if (operation.operationId) byId.set(operation.operationId, operation);
  const parts = ['// Generated from openapi.json by scripts/sdk-types.ts: do not edit. Run `npm run openapi:write`.\n'];
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) parts.push(declaration(name, schema));
  for (const id of OPERATIONS) {
    const operation = byId.get(id);
    if (!operation) throw new Error(`openapi.json has no operation ${id}, which the SDK calls`);
    const request = operation.requestBody?.content?.['application/json']?.schema;
    if (request) parts.push(declaration(`${pascal(id)}Request`, request));
    const response = successSchema(operation);
    if (response) parts.push(declaration(`${pascal(id)}Response`, response));
  }
  return parts.join('\n');
}

// Only when run as a script: scripts/web-types.ts imports typeOf from here.
const isMain = process.argv[1] !== undefined && import.meta.filename === path.resolve(process.argv[1]);
const mode = process.argv[2];
if (isMain && (mode === 'write' || mode === 'check')) {
  const generated = generate(JSON.parse(fs.readFileSync(source, 'utf8')));
  if (mode === 'write') {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, generated);
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
  } else if ((fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '') !== generated) {
    console.error('sdk/src/generated/api.ts is out of date with openapi.json: run `npm run openapi:write` and commit it.');
    process.exit(1);
  } else {
    console.log('sdk/src/generated/api.ts matches openapi.json');
  }
} else if (isMain) {
  console.error('usage: tsx scripts/sdk-types.ts write|check');
  process.exit(2);
}
