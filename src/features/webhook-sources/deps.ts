import type { AppContext } from '../../context.js';

/** Source secrets are sealed with the secret box (they must be read back to verify signatures). */
export type WebhookSourcesDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets'>;
