/**
 * Tags and owner: what a team with hundreds of experiments files them under. Neither changes how
 * an experiment assigns or is analysed, so both may change in any status.
 */
import Type, { type Static } from 'typebox';
import type { Executor } from '../../db/database.js';
import { problems, type FieldError } from '../../http/problems.js';
import { ULID_PATTERN } from '../../lib/ids.js';
import { findPerson } from '../people/read.js';

export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 32;
/** After trimming and lower-casing: starts with a letter or digit; no comma (the filter's separator) or quote. */
const TAG_SHAPE = /^[a-z0-9][a-z0-9 ._:/-]*$/;

export const TagsInput = Type.Array(Type.String({ minLength: 1, maxLength: MAX_TAG_LENGTH }), {
  maxItems: MAX_TAGS,
  description: `at most ${MAX_TAGS} tags of at most ${MAX_TAG_LENGTH} characters: letters, digits, spaces and . _ : / -, starting with a letter or digit; stored trimmed and in lower case`,
});

export const OwnerInput = Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
  description:
    'who owns it: a person’s id (GET /v1/users), or a name as free text; null for nobody. Created from a signed-in admin UI session without one, the person signed in.',
});

export const OwnerSchema = Type.Union(
  [
    Type.Object({
      user_id: Type.Union([Type.String(), Type.Null()], { description: 'the person’s id, or null when the owner is a name given as text' }),
      name: Type.String({ description: 'the person’s name (as when set as owner), or the text given' }),
    }),
    Type.Null(),
  ],
  { description: 'who owns it, or null for nobody' },
);
export type Owner = Static<typeof OwnerSchema>;

/** Trimmed and in lower case, duplicates dropped, in the given order. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  return [...new Set((tags ?? []).map((tag) => tag.trim().toLowerCase()))];
}

export function tagErrors(tags: readonly string[] | undefined, pointer = '/tags'): FieldError[] {
  return (tags ?? []).flatMap((tag, index) =>
    TAG_SHAPE.test(tag.trim().toLowerCase())
      ? []
      : [{ pointer: `${pointer}/${index}`, message: 'a tag holds letters, digits, spaces and . _ : / -, and starts with a letter or digit' }],
  );
}

export function parseTags(stored: string | null | undefined): string[] {
  return stored ? (JSON.parse(stored) as string[]) : [];
}

export function serializeTags(tags: readonly string[] | undefined): string | null {
  const normalized = normalizeTags(tags);
  return normalized.length === 0 ? null : JSON.stringify(normalized);
}

export function toOwner(userId: string | null | undefined, name: string | null | undefined): Owner {
  return name ? { user_id: userId ?? null, name } : null;
}

export interface OwnerColumns {
  owner_user_id: string | null;
  owner_name: string | null;
}

/** The owner's columns: a person's id must name a person of the workspace (else 422); any other text is a name. */
export async function resolveOwner(executor: Executor, workspaceId: string, owner: string | null): Promise<OwnerColumns> {
  const text = owner?.trim() ?? '';
  if (text === '') return { owner_user_id: null, owner_name: null };
  if (!ULID_PATTERN.test(text)) return { owner_user_id: null, owner_name: text };
  const person = await findPerson(executor, workspaceId, text);
  if (!person) {
    throw problems.validation([{ pointer: '/owner', message: 'no person with this id in the workspace (give a name as text for someone without an account)' }]);
  }
  return { owner_user_id: person.id, owner_name: person.name };
}

/** The fields that file an experiment away rather than define it: they change in any status. */
export const LABEL_FIELDS: ReadonlySet<string> = new Set(['tags', 'owner']);

/** An owner as a patch gives it (a person's id, a name, or null), to compare with the stored one. */
export function ownerText(owner: string | Owner | undefined): string | null {
  if (owner === null || owner === undefined) return null;
  if (typeof owner === 'string') return owner.trim() === '' ? null : owner.trim();
  return owner.user_id ?? owner.name;
}

/** "a,b" and repeated parameters alike, as normalized tags. */
export function tagFilter(value: string | string[] | undefined): string[] {
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return normalizeTags(values.flatMap((item) => item.split(',')).filter((tag) => tag.trim() !== ''));
}
