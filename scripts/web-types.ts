// Generates the admin UI's API types from openapi.json (`write`), or fails when the committed
// web/src/api-types.ts differs from what openapi.json would give (`check`, run by
// `npm run openapi:check`), so the UI cannot drift from the API it reads. web/src/types.ts names
// the resources the pages use on top of these types.
import fs from 'node:fs';
import path from 'node:path';
import { typeOf } from './sdk-types.js';

type Schema = Parameters<typeof typeOf>[0];

interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const root = path.resolve(import.meta.dirname, '..');
const source = path.join(root, 'openapi.json');
const target = path.join(root, 'web', 'src', 'api-types.ts');

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * Declarations in order; a schema identical to an earlier one (the experiment that start, stop
 * and PATCH answer with, the snapshot that compute answers with) becomes an alias of it.
 */
class Declarations {
  private readonly parts = [
    '// Generated from openapi.json by scripts/web-types.ts: do not edit. Run `npm run openapi:write`.\n' +
      '/* eslint-disable max-lines -- openapi.json inlines its schemas, so this file is long */\n',
  ];
  private readonly nameOfType = new Map<string, string>();

  add(name: string, schema: Schema, comment: string): void {
    const type = typeOf(schema);
    const earlier = this.nameOfType.get(type);
    if (earlier === undefined) this.nameOfType.set(type, name);
    this.parts.push(`/** ${comment.replace(/\*\//g, '*\\/')} */\nexport type ${name} = ${earlier ?? type};\n`);
  }

  text(): string {
    return this.parts.join('\n');
  }
}

function jsonSchemaOf(content: Record<string, { schema?: Schema }> | undefined): Schema | undefined {
  return content?.['application/json']?.schema;
}

/** The first 2xx answer with a JSON body (204 and byte downloads have none). */
function successSchema(operation: Operation): { status: string; schema: Schema } | undefined {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const schema = status.startsWith('2') ? jsonSchemaOf(response.content) : undefined;
    if (schema) return { status, schema };
  }
  return undefined;
}

/**
 * Every component schema under its own name, then, for every operation, `<OperationId>Request`
 * (its JSON body, when it takes one) and `<OperationId>Response` (its JSON success answer).
 */
export function generate(document: OpenApiDocument): string {
  const declarations = new Declarations();
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) declarations.add(name, schema, `components.schemas.${name}`);
  for (const [route, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!operation.operationId) continue;
      const name = pascal(operation.operationId);
      const where = `${method.toUpperCase()} ${route}`;
      const request = jsonSchemaOf(operation.requestBody?.content);
      if (request) declarations.add(`${name}Request`, request, `${where}: request body`);
      const success = successSchema(operation);
      if (success) declarations.add(`${name}Response`, success.schema, `${where}: ${success.status} body`);
    }
  }
  return declarations.text();
}

const isMain = process.argv[1] !== undefined && import.meta.filename === path.resolve(process.argv[1]);
const mode = process.argv[2];
const relativeTarget = path.relative(root, target);
if (isMain && (mode === 'write' || mode === 'check')) {
  const generated = generate(JSON.parse(fs.readFileSync(source, 'utf8')) as OpenApiDocument);
  if (mode === 'write') {
    fs.writeFileSync(target, generated);
    console.log(`wrote ${relativeTarget}`);
  } else if ((fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '') !== generated) {
    console.error(`${relativeTarget} is out of date with openapi.json: run \`npm run openapi:write\` and commit it.`);
    process.exit(1);
  } else {
    console.log(`${relativeTarget} matches openapi.json`);
  }
} else if (isMain) {
  console.error('usage: tsx scripts/web-types.ts write|check');
  process.exit(2);
}
