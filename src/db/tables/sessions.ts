/** One signed-in admin UI browser; the row is deleted on sign-out. */
export interface SessionsTable {
  id: string;
  /** SHA-256 (hex) of the token in the cookie; the token itself is never stored. */
  token_hash: string;
  /** The server key that signed in; its revocation ends the session too. */
  key_id: string;
  workspace_id: string;
  /** Sent back by the UI in X-CSRF-Token on state-changing requests. */
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface SessionTables {
  sessions: SessionsTable;
}
