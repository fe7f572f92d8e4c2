import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { addPerson, signInAs, type PersonSession } from './people-support.js';
import { experimentWithResults } from './result-fixture.js';

const SOME_ID = '01JBZ5Q3M4N8V2W6X7Y9Z0ABCD';
const CHANGES = ['post', 'put', 'patch', 'delete'];

interface Operation {
  method: string;
  path: string;
  role: string | undefined;
}

/** Every operation of the API description that needs a credential, with the role it names. */
async function authenticatedOperations(url: string): Promise<Operation[]> {
  const document = (await (await fetch(`${url}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { security?: unknown; 'x-required-role'?: string }>>;
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (operation.security) operations.push({ method, path, role: operation['x-required-role'] });
    }
  }
  return operations;
}

describeEachDialect('people: roles enforced on the server', (server) => {
  let key: string;
  let environmentId: string;
  let viewer: PersonSession;
  let editor: PersonSession;
  let admin: PersonSession;
  let editorId: string;
  let viewerId: string;

  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap('Roles Co'));
    ({
      user: { id: viewerId },
    } = await addPerson(server(), key, 'vera@example.com', 'viewer', 'Vera Viewer'));
    ({
      user: { id: editorId },
    } = await addPerson(server(), key, 'eddie@example.com', 'editor', 'Eddie Editor'));
    await addPerson(server(), key, 'ann@example.com', 'admin', 'Ann Admin');
    viewer = await signInAs(server(), 'vera@example.com');
    editor = await signInAs(server(), 'eddie@example.com');
    admin = await signInAs(server(), 'ann@example.com');
  });

  it('every change in the API description answers a viewer 403 with a problem, and changes nothing', async () => {
    const operations = (await authenticatedOperations(server().url)).filter((operation) => CHANGES.includes(operation.method));
    expect(operations.length).toBeGreaterThan(30);
    const before = await server().request('GET', '/v1/audit?limit=1', { key });
    for (const operation of operations) {
      expect(['editor', 'admin'], `${operation.method} ${operation.path}`).toContain(operation.role);
      const path = operation.path.replace(/\{[^}]+\}/g, SOME_ID);
      const answer = await server().request(operation.method.toUpperCase(), path, { headers: viewer.change, body: {} });
      expect(answer.status, `${operation.method} ${operation.path}: ${answer.text}`).toBe(403);
      expect(answer.headers.get('content-type'), `${operation.method} ${operation.path}`).toMatch(/application\/problem\+json/);
      expect(answer.body.detail).toMatch(/viewer/);
    }
    const after = await server().request('GET', '/v1/audit?limit=1', { key });
    expect(after.body.data[0].id).toBe(before.body.data[0].id);
  });

  it('names the least role of every operation in the description, with the table', async () => {
    const document = (await (await fetch(`${server().url}/v1/openapi.json`)).json()) as any;
    expect(document.info.description).toContain('## Roles');
    expect(document.paths['/v1/users'].post['x-required-role']).toBe('admin');
    expect(document.paths['/v1/metrics'].post['x-required-role']).toBe('editor');
    expect(document.paths['/v1/metrics'].get['x-required-role']).toBe('viewer');
  });

  it('lets a viewer read, an editor change experiments and metrics but not keys or people, an admin everything', async () => {
    expect((await server().request('GET', '/v1/metrics', { headers: viewer.read })).status).toBe(200);
    expect((await server().request('GET', '/v1/users', { headers: viewer.read })).status).toBe(403);
    const metric = await server().request('POST', '/v1/metrics', {
      headers: editor.change,
      body: { key: 'signups', name: 'Sign-ups', event_key: 'signup', kind: 'count' },
    });
    expect(metric.status, metric.text).toBe(201);
    expect(
      (await server().request('POST', '/v1/api-keys', { headers: editor.change, body: { name: 'x', kind: 'server', environment_id: environmentId } })).status,
    ).toBe(403);
    expect((await server().request('POST', '/v1/users', { headers: editor.change, body: { email: 'new@example.com', role: 'admin' } })).status).toBe(403);
    const invited = await server().request('POST', '/v1/users', { headers: admin.change, body: { email: 'new@example.com', role: 'editor' } });
    expect(invited.status).toBe(201);
    expect(invited.body.invite_url).toContain('/ui/invitations/');
  });

  it('names the person in the audit log and filters by person', async () => {
    const byPeople = await server().request('GET', '/v1/audit?actor_type=user&action=metric.created', { key });
    expect(byPeople.status).toBe(200);
    expect(byPeople.body.data[0].actor).toEqual({ type: 'user', id: editorId, name: 'Eddie Editor', email: 'eddie@example.com' });
    const byEddie = await server().request('GET', `/v1/audit?actor_id=${editorId}`, { key });
    expect(byEddie.body.data.length).toBeGreaterThan(0);
    expect(byEddie.body.data.every((entry: { actor: { email: string } }) => entry.actor.email === 'eddie@example.com')).toBe(true);
    const byKeys = await server().request('GET', '/v1/audit?actor_type=api_key', { key });
    expect(byKeys.body.data.every((entry: { actor: { type: string } }) => entry.actor.type === 'api_key')).toBe(true);
  });

  it("audits a viewer's peek at results, naming the viewer", async () => {
    const { experiment } = await experimentWithResults(server(), key, environmentId, 'peeked');
    const read = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { headers: viewer.read });
    expect(read.status, read.text).toBe(200);
    const peeks = await server().request('GET', `/v1/audit?action=experiment.results_peeked&target_id=${experiment.id}`, { key });
    expect(peeks.body.data).toHaveLength(1);
    expect(peeks.body.data[0].actor).toMatchObject({ type: 'user', id: viewerId, name: 'Vera Viewer' });
  });
});
