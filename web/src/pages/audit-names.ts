// Names and links for the ids in audit entries: the acting API key by its name, each target by
// the name (or key) of what it is, and where in the UI it lives. Deleted targets fall back to
// the name their entry's payload kept, else to "a deleted …".
import { api, type Page } from '../api.js';
import type { ApiKey, AuditEntry, Environment } from '../types.js';

/** Each target type's page in the UI, and the API route that reads one by id (when there is one). */
const TARGETS: Record<string, { label: string; href: (id: string) => string; read?: (id: string) => string }> = {
  experiment: { label: 'experiment', href: (id) => `/experiments/${id}`, read: (id) => `/v1/experiments/${id}` },
  experiment_template: {
    label: 'experiment template',
    href: () => '/experiment-templates',
    read: (id) => `/v1/experiment-templates/${id}`,
  },
  metric: { label: 'metric', href: (id) => `/metrics/${id}`, read: (id) => `/v1/metrics/${id}` },
  segment: { label: 'segment', href: () => '/segments', read: (id) => `/v1/segments/${id}` },
  template: { label: 'template', href: (id) => `/templates/${id}`, read: (id) => `/v1/templates/${id}` },
  webhook_source: { label: 'webhook source', href: (id) => `/webhook-sources/${id}`, read: (id) => `/v1/webhook-sources/${id}` },
  mutex_group: { label: 'mutex group', href: () => '/mutex-groups', read: (id) => `/v1/mutex-groups/${id}` },
  lead: { label: 'lead', href: () => '/leads', read: (id) => `/v1/leads/${id}` },
  render: { label: 'render', href: () => '/templates', read: (id) => `/v1/renders/${id}` },
  api_key: { label: 'API key', href: () => '/api-keys' },
  environment: { label: 'environment', href: () => '/environments' },
  session: { label: 'session', href: () => '/audit?target_type=session' },
  workspace: { label: 'workspace', href: () => '/audit?target_type=workspace' },
};

export const TARGET_TYPES = Object.keys(TARGETS);

export function targetLabel(type: string): string {
  return TARGETS[type]?.label ?? type.replace(/_/g, ' ');
}

export function targetHref(type: string, id: string): string | null {
  return TARGETS[type]?.href(id) ?? null;
}

export interface Names {
  actor(id: string | null): string;
  target(entry: AuditEntry): string;
}

function nameIn(value: unknown): string | null {
  if (!value || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  for (const field of ['name', 'key', 'label', 'slug']) if (typeof record[field] === 'string' && record[field]) return record[field] as string;
  return null;
}

/** What a payload remembers of its target: {name}, {key}, {experiment: {name}}, {changes: {name: {to}}}. */
function payloadName(entry: AuditEntry): string | null {
  const payload = entry.payload;
  const nested = Object.values(payload).find((value) => value && typeof value === 'object' && !Array.isArray(value) && nameIn(value));
  return nameIn(payload) ?? (nested ? nameIn(nested) : null);
}

/** Reads the names of every id on a page of entries, once each. */
export async function loadNames(entries: AuditEntry[], workspaceName: string): Promise<Names> {
  const [keys, environments] = await Promise.all([
    api<Page<ApiKey>>('GET', '/v1/api-keys?limit=200&include_revoked=true').catch(() => ({ data: [] as ApiKey[] })),
    api<Page<Environment>>('GET', '/v1/environments?limit=200').catch(() => ({ data: [] as Environment[] })),
  ]);
  const known = new Map<string, string>();
  for (const key of keys.data) known.set(key.id, key.name);
  for (const environment of environments.data) known.set(environment.id, environment.name);
  // People are named by the entries themselves (actor.name), so no admin-only read of /v1/users is needed.
  for (const entry of entries)
    if (entry.actor.type === 'user' && entry.actor.id) known.set(entry.actor.id, entry.actor.name ?? entry.actor.email ?? 'a person');
  const wanted = new Map<string, string>();
  for (const entry of entries) {
    const read = TARGETS[entry.target_type]?.read;
    if (read && !known.has(entry.target_id)) wanted.set(entry.target_id, read(entry.target_id));
  }
  await Promise.all(
    [...wanted].map(async ([id, path]) => {
      const found = await api<unknown>('GET', path).catch(() => null);
      const name = nameIn(found) ?? (found && typeof found === 'object' && 'template_id' in found ? 'a render' : null);
      if (name) known.set(id, name);
    }),
  );
  return {
    actor: (id) => (id === null ? 'the system (command line or a background job)' : (known.get(id) ?? 'a deleted API key')),
    target: (entry) => {
      if (entry.target_type === 'workspace') return workspaceName;
      if (entry.target_type === 'session') return 'a UI session';
      return known.get(entry.target_id) ?? payloadName(entry) ?? `a deleted ${targetLabel(entry.target_type)}`;
    },
  };
}
