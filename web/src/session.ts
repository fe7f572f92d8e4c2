/** Who is signed in, for pages that need to know (set by main.tsx on sign-in and sign-out). */
export const currentSession: {
  keyId: string | null;
  /** The person signed in (null for a key's session): the owner of what they create unless they name another. */
  user: { id: string; name: string } | null;
  workspaceName: string;
  role: 'viewer' | 'editor' | 'admin';
} = {
  keyId: null,
  user: null,
  workspaceName: 'this workspace',
  role: 'viewer',
};
