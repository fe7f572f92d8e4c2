import type { OperationDoc } from './operation-doc.js';

/** People, share links and exports (docs/ui.md "People and roles", "Sharing a result"). */
export const PEOPLE_OPERATION_DOCS: Record<string, OperationDoc> = {
  listUsers: { summary: 'List people', description: 'The people of the workspace with their role and status (invited, active, disabled), by email.' },
  inviteUser: {
    summary: 'Invite a person',
    description:
      'Creates the account (email lower-cased, a role) and a one-time invitation link, valid 7 days, in this response only (the token is its last path segment); it points at `VERDICT_PUBLIC_URL` when set. 409 when the address has an account in the workspace. Audit-logged (never the link).',
  },
  updateUser: {
    summary: 'Change a person’s role or disable them',
    description:
      'Changes `role` and/or `disabled`; any change ends the person’s sessions. 409 when it would leave the workspace without an active admin. Audit-logged.',
  },
  issuePasswordReset: {
    summary: 'Issue a password reset link',
    description:
      'A one-time link, valid 24 hours, in this response only, that sets a new password; it replaces earlier unused reset links. 409 for a disabled account. Audit-logged.',
  },
  signOutUser: { summary: 'Sign a person out everywhere', description: 'Ends every admin UI session of the person; answers how many. Audit-logged.' },
  acceptInvitation: {
    summary: 'Accept an invitation',
    description:
      'Sets the name and the password (12 to 256 characters, stored as an scrypt hash) and uses the link up. 404 for an unknown link, 410 for a used, replaced or expired one.',
  },
  acceptPasswordReset: {
    summary: 'Set a new password from a reset link',
    description: 'Sets the password, uses the link up and ends every session of the person. 404 for an unknown link, 410 for a used, replaced or expired one.',
  },
  createShareLink: {
    summary: 'Share an experiment’s results by link',
    description:
      'A read-only link to this experiment’s latest results, valid `expires_in_days` (1 to 90, default 7) until revoked. The `url` is in this response only; only a hash of its token is stored. Audit-logged.',
  },
  listShareLinks: { summary: 'List an experiment’s share links', description: 'Newest first, with status active, expired or revoked (never the URL).' },
  revokeShareLink: {
    summary: 'Revoke a share link',
    description: 'The link answers 410 from then on. Idempotent; 404 when no such link exists in the workspace. Audit-logged.',
  },
  viewSharedResults: {
    summary: 'Read shared results',
    description:
      'What a share link opens: the experiment’s name and its latest results, nothing else; a browser (`Accept: text/html`) gets them as a page without script. 404 for an unknown link, 410 for a revoked or expired one. Every view is audit-logged.',
  },
  exportResults: {
    summary: 'Export the latest results',
    description:
      '`format=csv`: `text/csv`, one row per metric (primary, then guardrails) and variant. `format=notebook`: the per-variant statistics as JSON and a Python script (`script`) that recomputes every interval and effect with SciPy. 404 without a snapshot. Audit-logged.',
  },
  exportResultsHistory: {
    summary: 'Export the results history',
    description: '`format=csv`: every snapshot, oldest first, one row per metric and variant. Audit-logged.',
  },
};
