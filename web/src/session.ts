/** Who is signed in, for pages that need to know (set by main.tsx on sign-in and sign-out). */
export const currentSession: { keyId: string | null; workspaceName: string; role: 'viewer' | 'editor' | 'admin' } = {
  keyId: null,
  workspaceName: 'this workspace',
  role: 'viewer',
};
