import { problems } from '../../http/problems.js';

/**
 * Who may do what in the admin UI (docs/ui.md "People and roles"). A person's session carries one
 * role; each route the server has needs one. Keys are not people: a server API key (and a session
 * signed in with one) may do everything a key's scope allows, as before.
 *
 * The table is read top to bottom and the first rule whose method and path match decides. Paths are
 * Fastify route patterns (`/v1/experiments/:id/start`); a rule ending in `*` matches that prefix.
 * Reads (GET, HEAD) that no rule names need `viewer`; **changes that no rule names need `admin`**,
 * so a route added later is closed to editors until a rule opens it.
 */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

export interface RoleRule {
  /** HTTP methods the rule covers; `*` for every method. */
  methods: readonly string[] | '*';
  /** A route pattern, or a prefix ending in `*`. */
  path: string;
  role: Role;
}

const READS = ['GET', 'HEAD'] as const;
const CHANGES = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Reading the people of the workspace is the admins' (keys are listed by prefix only, so any role reads them). */
export const ROLE_RULES: readonly RoleRule[] = [
  { methods: '*', path: '/v1/users*', role: 'admin' },
  // Experiments and their satellites (results, overrides, share links, launches) are the editors' work.
  { methods: CHANGES, path: '/v1/experiments*', role: 'editor' },
  { methods: CHANGES, path: '/v1/experiment-templates*', role: 'editor' },
  { methods: CHANGES, path: '/v1/share-links*', role: 'editor' },
  { methods: CHANGES, path: '/v1/metrics*', role: 'editor' },
  { methods: CHANGES, path: '/v1/segments*', role: 'editor' },
  { methods: CHANGES, path: '/v1/templates*', role: 'editor' },
  { methods: CHANGES, path: '/v1/renders*', role: 'editor' },
  { methods: CHANGES, path: '/v1/mutex-groups*', role: 'editor' },
  { methods: CHANGES, path: '/v1/leads*', role: 'editor' },
  // Keys, endpoints, sources, environments, task tool, holdouts, data sources: the default, admin.
  { methods: READS, path: '*', role: 'viewer' },
];

/** The default for a change no rule names. */
export const DEFAULT_CHANGE_ROLE: Role = 'admin';

function matches(rule: RoleRule, method: string, path: string): boolean {
  if (rule.methods !== '*' && !rule.methods.includes(method)) return false;
  return rule.path.endsWith('*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path;
}

/** The least role that may call `method path` (a route pattern). */
export function requiredRole(method: string, path: string): Role {
  const upper = method.toUpperCase();
  return ROLE_RULES.find((rule) => matches(rule, upper, path))?.role ?? DEFAULT_CHANGE_ROLE;
}

export function roleAllows(held: Role, needed: Role): boolean {
  return RANK[held] >= RANK[needed];
}

/** The table as Markdown, for the OpenAPI description. */
export function roleTableMarkdown(): string {
  const rows = ROLE_RULES.map((rule) => `| ${rule.methods === '*' ? 'any' : rule.methods.join(', ')} | \`${rule.path}\` | ${rule.role} |`);
  return ['| methods | route | least role |', '|---|---|---|', ...rows, `| any other change | | ${DEFAULT_CHANGE_ROLE} |`].join('\n');
}

/** Throws a 403 problem when a person's role is below what the route needs (keys pass: they have no role). */
export function refuseUnlessRoleAllows(role: Role | undefined, method: string, routeUrl: string | undefined): void {
  if (role === undefined) return;
  const needed = requiredRole(method, routeUrl ?? '');
  if (!roleAllows(role, needed)) {
    throw problems.forbidden(`a ${role} cannot ${method} ${routeUrl ?? 'this route'}: it needs the ${needed} role; ask an admin of this workspace`);
  }
}
