import type { AppContext } from '../../context.js';
import type { Authenticator } from './authenticator.js';

declare module '../../context.js' {
  /** The API keys' service, built by the composition root (app/context.ts). */
  interface AppContext {
    /** Resolves a bearer key to its workspace, cached; records each key's last use. */
    authenticator: Authenticator;
  }
}

/** The authenticator shows usage not yet written; a revocation is published on the change feed. */
export type ApiKeysDeps = Pick<AppContext, 'db' | 'clock' | 'changes' | 'authenticator'>;
