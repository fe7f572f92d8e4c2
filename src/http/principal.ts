/** Which kind of API key acts: a server key may do everything its scope allows, a client key only assign and send events. */
export type KeyKind = 'server' | 'client';

/** Who a request acts as, once authenticated (by an API key, or by a person's admin UI session). */
export interface Principal {
  /** The actor's id: the API key's, or the person's when a person's admin UI session acts (people/). */
  keyId: string;
  workspaceId: string;
  environmentId: string | null;
  kind: KeyKind;
  /** `session` when the admin UI's cookie stood in for the bearer key. */
  via: 'bearer' | 'session';
  /** Set when a person (not a key) acts: who they are and the role that bounds what they may do. */
  user?: { id: string; email: string; name: string; role: 'viewer' | 'editor' | 'admin' };
}

/** What the HTTP layer needs of API-key authentication (features/api-keys implements it). */
export interface KeyAuthenticator {
  /** The key's principal; a 401 problem when the header is missing, malformed, unknown or revoked. */
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** The principal from memory when this key was checked recently on this connection, else undefined. */
  authenticateCached(authorization: string | undefined, connection?: object): Principal | undefined;
}
