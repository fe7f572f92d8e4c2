import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { AuthScope } from './auth.js';
import { describeOperation } from './operation-docs.js';
import { problemDoc, ProblemSchema } from './schemas.js';

export const API_VERSION = '0.1.0';

/** Every route documents the problems it can answer with, derived from what it declares. */
function addStandardResponses(route: RouteOptions): void {
  const schema = route.schema;
  if (!schema || schema.hide) return;
  const scope = (route.config as { auth?: AuthScope } | undefined)?.auth ?? 'server';
  const response = (schema.response ?? {}) as Record<string, unknown>;
  const add = (status: string, description: string) => {
    if (!(status in response)) response[status] = problemDoc(description);
  };
  if (schema.querystring || schema.params) add('400', 'malformed request or invalid parameters');
  if (scope !== 'public') add('401', 'missing, malformed, unknown or revoked API key');
  if (scope === 'server') add('403', 'a client key called a server-only operation');
  if (schema.body) {
    add('400', 'malformed JSON');
    add('413', 'body too large');
    add('415', 'body is not application/json');
    add('422', 'the body failed validation; see errors[]');
  }
  add('500', 'unexpected error; the body carries an error_id that is also logged');
  // Every authenticated request may need the database, at least to verify a key not cached yet.
  if (scope !== 'public') add('503', 'the database cannot be reached or is busy (or the key cannot be verified now); retry after Retry-After');
  schema.response = response;
  if (scope !== 'public' && !schema.security) schema.security = [{ bearerAuth: [] }];
}

/** Who among a workspace's people may call each operation (features/people/roles.ts), for the description. */
export interface RoleDocs {
  requiredRole: (method: string, url: string) => string;
  tableMarkdown: string;
}

/** Each operation a person's session may reach names the least role it needs, as `x-required-role`. */
function addRequiredRole(route: RouteOptions, roles: RoleDocs): void {
  const schema = route.schema as (RouteOptions['schema'] & Record<string, unknown>) | undefined;
  const scope = (route.config as { auth?: AuthScope } | undefined)?.auth ?? 'server';
  if (!schema || schema.hide || scope === 'public') return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const role = roles.requiredRole(methods[0] ?? 'GET', route.url);
  schema['x-required-role'] = role;
  if (typeof schema.description === 'string') schema.description += ` In the admin UI, a person needs the ${role} role.`;
}

export async function installOpenApi(app: FastifyInstance, roles?: RoleDocs): Promise<void> {
  app.addSchema(ProblemSchema);
  app.addHook('onRoute', (route) => {
    addStandardResponses(route);
    describeOperation(route);
    if (roles) addRequiredRole(route, roles);
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Verdict API',
        version: API_VERSION,
        description:
          'Experimentation (sticky assignment, events, Bayesian analysis), signed webhooks and versioned templates. ' +
          'Authenticate with `Authorization: Bearer <key>`; errors are RFC 9457 problems.' +
          (roles
            ? '\n\n## Roles\n\nA person signed in to the admin UI acts with their role; an API key is not bound by roles. ' +
              'Each operation names the least role it needs in `x-required-role`; the first matching rule decides:\n\n' +
              roles.tableMarkdown
            : ''),
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'vd_{srv|clt}_{env}_{secret}' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/v1/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
}
