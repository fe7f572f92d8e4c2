import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_DOCS } from '../../src/http/operation-docs.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  description?: string;
  security?: unknown[];
}

// The API reference at /docs is what a new user reads first: every operation says in one line
// what it is, and in its description what it does, who may call it and its notable errors.
// A route added without an entry in src/http/operation-docs.ts fails here.
describe('the served API description', () => {
  let server: TestServer;
  let operations: Operation[];
  beforeAll(async () => {
    server = await startTestServer('sqlite');
    const document = (await server.request('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, ...operation })),
    );
  });
  afterAll(async () => server.close());

  it('gives every operation an operationId, a one-line summary and a description', () => {
    expect(operations.length).toBeGreaterThan(50);
    const undocumented = operations
      .filter((op) => !op.operationId || !op.summary || !op.description || op.summary.includes('\n') || op.summary.length > 60)
      .map((op) => `${op.method} ${op.path} (${op.operationId ?? 'no operationId'})`);
    expect(undocumented, 'add these to src/http/operation-docs.ts').toEqual([]);
  });

  it('says who may call each operation, as the server enforces it', async () => {
    for (const op of operations) {
      const who = op.description?.split('\n\n').at(-1);
      if (!op.security) expect(who, op.operationId).toBe('Who may call: anyone; no API key.');
      else expect(who, op.operationId).toMatch(/^Who may call: a server key/);
    }
    const byId = new Map(operations.map((op) => [op.operationId, op]));
    expect(byId.get('createExperiment')?.description).toContain('a client key gets 403');
    expect(byId.get('assign')?.description).toContain('or a client key');
    // And the enforcement matches the words: a client key is refused where a server key is required.
    const { key } = await server.bootstrap();
    const clientKey = (await server.request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } })).body.key as string;
    expect((await server.request('GET', '/v1/experiments', { key: clientKey })).status).toBe(403);
  });

  it('has no entry for an operation that does not exist', () => {
    const served = new Set(operations.map((op) => op.operationId));
    expect(Object.keys(OPERATION_DOCS).filter((id) => !served.has(id))).toEqual([]);
  });
});
